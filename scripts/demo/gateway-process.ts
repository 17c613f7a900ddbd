/**
 * @module The gateway for the demo, from its sources (`npm start` runs the same code from dist/): `node --import tsx src/main.ts` in a
 * child process with a config file, its control API port and first-start sandbox key read from
 * its output, and a graceful SIGTERM stop.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, where `src/main.ts` and tsx are found. */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** How many of the gateway's output lines are kept to explain a failure. */
const KEEP_LINES = 40;
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 15_000;

/** Options of {@link GatewayProcess.start}. */
export interface GatewayProcessOptions {
  /** The demo's temporary folder: config.yaml goes here, the data folder under it. */
  workDir: string;
  /** What the sandbox far end says after answering: empty for its tones, absent for its default. */
  announcement?: string;
  /** Time the sandbox far end rings before it answers. */
  ringMs: number;
}

/** A random even RTP range of 400 ports in 30000-39999, so a demo beside a test run rarely collides. */
function rtpRange(): { min: number; max: number } {
  const min = 30000 + 2 * Math.floor(Math.random() * 4800);
  return { min, max: min + 399 };
}

/** Loopback only, free ports, private agent URLs allowed (the demo agent is on 127.0.0.1). */
function writeConfig(o: GatewayProcessOptions): { configFile: string; dataDir: string } {
  const dataDir = join(o.workDir, 'data');
  const { min, max } = rtpRange();
  const configFile = join(o.workDir, 'config.yaml');
  writeFileSync(configFile, [
    `data_dir: ${JSON.stringify(dataDir)}`,
    'log_level: info',
    'http:\n  host: 127.0.0.1\n  port: 0',
    'sip:\n  host: 127.0.0.1\n  port: 0',
    `rtp:\n  port_min: ${min}\n  port_max: ${max}`,
    `sandbox:\n  ring_ms: ${o.ringMs}${o.announcement === undefined ? '' : `\n  announcement: ${JSON.stringify(o.announcement)}`}`,
    'calls:\n  allow_private_agent_urls: true',
    'shutdown:\n  drain_seconds: 5',
    '',
  ].join('\n'));
  return { configFile, dataDir };
}

/** The child's environment: ours without any VGW_* setting, so only the demo's config applies. */
function childEnv(configFile: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('VGW_')) env[name] = value;
  return { ...env, VGW_CONFIG: configFile };
}

export class GatewayProcess {
  readonly #child: ChildProcess;
  readonly #lines: string[] = [];
  #partial = '';
  readonly dataDir: string;
  httpPort = 0;
  sandboxKey = '';

  private constructor(child: ChildProcess, dataDir: string) {
    this.#child = child;
    this.dataDir = dataDir;
  }

  /** Starts the gateway and resolves once its control API listens and the sandbox key is known. */
  static async start(o: GatewayProcessOptions): Promise<GatewayProcess> {
    const { configFile, dataDir } = writeConfig(o);
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: ROOT, env: childEnv(configFile), stdio: ['ignore', 'pipe', 'pipe'] });
    const gateway = new GatewayProcess(child, dataDir);
    await gateway.#ready();
    return gateway;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.httpPort}`;
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  get running(): boolean {
    return this.#child.exitCode === null && this.#child.signalCode === null;
  }

  /** The gateway's last output lines, for a failure report. */
  lastLines(): string[] {
    return this.#partial ? [...this.#lines, this.#partial] : [...this.#lines];
  }

  /** SIGTERM, then the exit code; SIGKILL if the drain does not finish in time. */
  async stop(): Promise<number | null> {
    if (!this.running) return this.#child.exitCode;
    const exited = once(this.#child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    this.#child.kill('SIGTERM');
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    const [code] = await exited;
    clearTimeout(timer);
    return code;
  }

  #collect(chunk: Buffer): void {
    const text = this.#partial + chunk.toString('utf8');
    const lines = text.split('\n');
    this.#partial = lines.pop() ?? '';
    for (const line of lines) {
      this.#lines.push(line);
      const port = /"port":(\d+),.*"msg":"control API listening"/.exec(line);
      if (port) this.httpPort = Number(port[1]);
      const key = /sandbox key: (vgw_test_\w+)/.exec(line);
      if (key) this.sandboxKey = key[1]!;
    }
    if (this.#lines.length > KEEP_LINES) this.#lines.splice(0, this.#lines.length - KEEP_LINES);
  }

  #ready(): Promise<void> {
    const child = this.#child;
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => finish(new Error(`the gateway did not start within ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS);
      const onExit = (code: number | null): void => finish(new Error(`the gateway exited with code ${code} while starting`));
      const onData = (chunk: Buffer): void => {
        this.#collect(chunk);
        if (this.httpPort > 0 && this.sandboxKey) finish();
      };
      let done = false;
      const finish = (err?: Error): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        child.stdout?.off('data', onData);
        child.off('exit', onExit);
        child.stdout?.on('data', (c: Buffer) => this.#collect(c));
        if (err) reject(err);
        else resolve();
      };
      child.stdout?.on('data', onData);
      // The first-start banner (the sandbox key) comes on stderr, the JSON log on stdout.
      child.stderr?.on('data', (c: Buffer) => { this.#collect(c); if (!done && this.httpPort > 0 && this.sandboxKey) finish(); });
      child.once('exit', onExit);
    });
  }
}
