/**
 * @module The gateway as an operator runs it: `src/main.ts` in a child process with the given
 * environment, resolved once the control API listens; killed at teardown if still running.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

interface Teardown {
  teardown(fn: () => void | Promise<void>): void;
}

export interface GatewayProcess {
  child: ChildProcess;
  port: number;
  base: string;
  /** Everything the process wrote so far, stdout and stderr. */
  output(): string;
}

/** `ready`: the log line that says the process is up, its group 1 the HTTP port (the control API's by default). */
export async function startGatewayProcess(t: Teardown, env: Record<string, string>, ready = /"port":(\d+),.*"msg":"control API listening"/): Promise<GatewayProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL'); });
  let output = '';
  child.stdout.on('data', (d: Buffer) => { output += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { output += d.toString(); });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start:\n${output}`)), 120_000);
    child.stdout.on('data', () => {
      const m = ready.exec(output);
      if (m) { clearTimeout(timer); listening = Number(m[1]); settle(); }
    });
    // On a first start the key comes on stderr (the log on stdout says so): wait for both.
    let listening = 0;
    const settle = (): void => {
      if (listening && (!output.includes('first start: sandbox tenant created') || /sandbox key: vgw_test_\w+\n/.test(output))) resolve(listening);
    };
    child.stderr.on('data', settle);
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`gateway exited ${code}:\n${output}`)); });
  });
  return { child, port, base: `http://127.0.0.1:${port}`, output: () => output };
}

/**
 * A config file for a gateway process on loopback (ephemeral HTTP and SIP ports, an RTP range of
 * its own, a quick sandbox, private agent URLs allowed for the fake agents) in `dir`, its data
 * folder `dir/data`; `extra` lines are appended as YAML.
 */
export function writeGatewayConfig(dir: string, extra: string[] = []): { configFile: string; dataDir: string } {
  const dataDir = join(dir, 'data');
  const rtpMin = 30000 + 2 * Math.floor(Math.random() * 4800);
  const configFile = join(dir, 'config.yaml');
  writeFileSync(configFile, [
    `data_dir: ${JSON.stringify(dataDir)}`,
    'log_level: info',
    'http:\n  host: 127.0.0.1\n  port: 0',
    'sip:\n  host: 127.0.0.1\n  port: 0',
    `rtp:\n  port_min: ${rtpMin}\n  port_max: ${rtpMin + 399}`,
    'sandbox:\n  ring_ms: 200\n  announcement: ""',
    'calls:\n  allow_private_agent_urls: true',
    ...extra,
  ].join('\n'));
  return { configFile, dataDir };
}
