/**
 * @module The calls benchmark's child processes: the gateway under test (its own Node process
 * with a temporary config, data folder and carriers file), the load agent, and reading a
 * process's CPU time and resident memory from /proc.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildProduct, REPO } from '../compiled.js';
import { CALLER_NUMBER } from './call-driver.js';
import type { AgentCallCounts, AgentReply, AgentRequest } from './protocol.js';

/** Linux reports utime and stime in clock ticks of 1/100 s (USER_HZ) on every architecture Node runs on. */
const USER_HZ = 100;

/** user + system CPU seconds of a process (its threads included), from /proc/PID/stat. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the parenthesised command name, which may itself hold spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / USER_HZ;
}

/** Resident set size in KiB, from VmRSS in /proc/PID/status. */
export function rssKiB(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) : NaN;
}

/** Keeps the last lines a child wrote, to show when it fails. */
function tail(child: ChildProcess, keep = 60): () => string {
  const lines: string[] = [];
  const take = (d: Buffer): void => {
    lines.push(...d.toString('utf8').split('\n').filter(Boolean));
    if (lines.length > keep) lines.splice(0, lines.length - keep);
  };
  child.stdout?.on('data', take);
  child.stderr?.on('data', take);
  return () => lines.join('\n');
}

/**
 * Where the gateway's code comes from, compiled as `npm start` runs it (`dist/`; see
 * bench/compiled.ts for why not tsx): the working tree, built in place, or `rev` exported with
 * `git archive` into `dir` and built there (so a run measures one commit even while the tree
 * changes), with the repository's node_modules linked beside it.
 */
export function gatewaySource(dir: string, rev: string | undefined): { root: string; label: string } {
  if (!rev) {
    buildProduct();
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], { cwd: REPO, encoding: 'utf8' }).trim() !== '';
    return { root: REPO, label: `working tree at ${head}${dirty ? ' with uncommitted changes in src/' : ''}` };
  }
  const commit = execFileSync('git', ['rev-parse', '--short', rev], { cwd: REPO, encoding: 'utf8' }).trim();
  const root = join(dir, 'gateway-src');
  mkdirSync(root, { recursive: true });
  const files = ['src', 'package.json', 'tsconfig.json', 'tsconfig.build.json', 'scripts/copy-assets.mjs'];
  // Commits since the media I/O addon carry it and its build script; older ones run on node:dgram.
  const hasAddon = spawnSync('git', ['cat-file', '-e', `${commit}:native/media-io`], { cwd: REPO }).status === 0;
  if (hasAddon) files.push('native', 'scripts/build-native.mjs');
  execFileSync('sh', ['-c', `git archive ${commit} ${files.join(' ')} | tar -x -C ${JSON.stringify(root)}`], { cwd: REPO });
  symlinkSync(join(REPO, 'node_modules'), join(root, 'node_modules'));
  if (hasAddon) execFileSync('npm', ['run', '--silent', 'build:native'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  return { root, label: `commit ${commit}` };
}

export interface GatewayProcessOptions {
  /** Source root holding the build (dist/) and node_modules. */
  root: string;
  dir: string;
  httpPort: number;
  sipPort: number;
  carriersYaml: string;
  rtp: { min: number; max: number };
  /** Extra node flags for the gateway (e.g. --cpu-prof). */
  nodeArgs?: readonly string[];
  /** A file that gets everything the gateway writes (e.g. `--trace-gc` lines); only its tail is kept otherwise. */
  outputFile?: string;
  /** `observability.sip_trace.enabled` (true, the default, as in production). */
  sipTrace?: boolean;
  /** Environment for the gateway process (VGW_ROLE, VGW_DATABASE_URL…), beside VGW_CONFIG. */
  env?: Record<string, string>;
  /** More top-level YAML blocks for the config file. */
  extraYaml?: readonly string[];
  /** The key of a tenant made before (a second process over the same store): no tenant is made. */
  apiKey?: string;
}

export interface GatewayProcess {
  child: ChildProcess;
  pid: number;
  base: string;
  apiKey: string;
  logTail(): string;
  stop(): Promise<void>;
}

function configYaml(o: GatewayProcessOptions, dataDir: string, carriersFile: string): string {
  return [
    `data_dir: ${JSON.stringify(dataDir)}`,
    `carriers_file: ${JSON.stringify(carriersFile)}`,
    'log_level: warn',
    // One API key drives 1,000 req/s plus the benchmark's own polling: the per-key limit is lifted.
    `http:\n  host: 127.0.0.1\n  port: ${o.httpPort}\n  rate_limit_per_second: 1000000\n  rate_limit_burst: 1000000`,
    `sip:\n  host: 127.0.0.1\n  port: ${o.sipPort}`,
    `rtp:\n  port_min: ${o.rtp.min}\n  port_max: ${o.rtp.max}`,
    'calls:\n  max_concurrent_per_tenant: 10000\n  allow_private_agent_urls: true\n  ring_timeout_seconds: 600',
    'sandbox:\n  announcement: ""',
    // Only when turned off: a gateway from before SIP traces (--gateway-rev) knows no such key.
    ...(o.sipTrace === false ? ['observability:\n  sip_trace:\n    enabled: false'] : []),
    ...(o.extraYaml ?? []),
    '',
  ].join('\n');
}

/**
 * A live key for a new tenant, made with the operator CLI on the gateway's fresh data folder
 * (`--init`: the CLI makes no database unasked). The tenant holds the calling number on every
 * carrier, as the default caller-ID policy (`owned`) asks.
 */
function createTenant(root: string, configFile: string, carriers: readonly string[], env: Record<string, string>): string {
  const vgw = (...args: string[]): string => execFileSync(process.execPath, ['dist/cli/vgw.js', ...args], {
    cwd: root, env: { ...process.env, ...env, VGW_CONFIG: configFile }, encoding: 'utf8',
  });
  const created = JSON.parse(vgw('tenant', 'create', 'bench', '--init')) as { api_key: string; tenant: { id: string } };
  for (const carrier of carriers) vgw('number', 'add', created.tenant.id, CALLER_NUMBER, '--carrier', carrier);
  return created.api_key;
}

async function waitHealthy(base: string, child: ChildProcess, logTail: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`gateway exited with ${child.exitCode}:\n${logTail()}`);
    const ok = await fetch(`${base}/healthz`).then((r) => r.ok, () => false);
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`gateway did not answer /healthz within 60 s:\n${logTail()}`);
}

export async function startGatewayProcess(o: GatewayProcessOptions): Promise<GatewayProcess> {
  const dataDir = join(o.dir, 'data');
  const carriersFile = join(o.dir, 'carriers.yaml');
  const configFile = join(o.dir, 'config.yaml');
  writeFileSync(carriersFile, o.carriersYaml);
  writeFileSync(configFile, configYaml(o, dataDir, carriersFile));
  const apiKey = o.apiKey ?? createTenant(o.root, configFile, [...o.carriersYaml.matchAll(/- name: (\S+)/g)].map((m) => m[1]!), o.env ?? {});
  const child = spawn(process.execPath, [...(o.nodeArgs ?? []), 'dist/main.js'], {
    cwd: o.root, env: { ...process.env, ...o.env, VGW_CONFIG: configFile }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logTail = tail(child);
  if (o.outputFile) {
    const out = createWriteStream(o.outputFile, { flags: 'a' });
    child.stdout?.pipe(out);
    child.stderr?.pipe(out);
  }
  const base = `http://127.0.0.1:${o.httpPort}`;
  await waitHealthy(base, child, logTail);
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  };
  return { child, pid: child.pid!, base, apiKey, logTail, stop };
}

export interface LoadAgent {
  pid: number;
  url: string;
  snapshot(): Promise<AgentCallCounts[]>;
  forgetClosed(): void;
  stop(): void;
}

export async function startLoadAgent(): Promise<LoadAgent> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'load-agent.ts')], {
    cwd: REPO, stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const waiting = new Map<number, (calls: AgentCallCounts[]) => void>();
  let nextId = 1;
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`load agent exited with ${code}`)));
    child.on('message', (m: AgentReply) => {
      if (m.type === 'listening') resolve(m.port);
      else waiting.get(m.id)?.(m.calls);
    });
  });
  const send = (request: AgentRequest): void => { child.send(request); };
  return {
    pid: child.pid!,
    url: `ws://127.0.0.1:${port}/agent`,
    snapshot: () => new Promise((resolve) => {
      const id = nextId++;
      waiting.set(id, (calls) => { waiting.delete(id); resolve(calls); });
      send({ type: 'snapshot', id });
    }),
    forgetClosed: () => send({ type: 'forget-closed' }),
    stop: () => { if (child.exitCode === null) child.kill('SIGTERM'); },
  };
}
