/**
 * @module The cluster's parts for `npm run cluster` (docs/CLUSTER.md "Try it: npm run cluster"),
 * each started on loopback in its own folder under the run folder: PostgreSQL, redis-server, the
 * Kamailio edge (sbc-config/kamailio/kamailio.cfg) and the gateway's roles (docs/ARCHITECTURE.md
 * "Process roles").
 */
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { answers200, answersOptions, ClusterStartError, startProcess, waitUntil, type Supervised } from './cluster-processes.js';

/** The repository root: `src/main.ts`, tsx and the edge's config are found from here. */
export const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const EDGE_CONFIG = join(ROOT, 'sbc-config', 'kamailio', 'kamailio.cfg');

const START_TIMEOUT_MS = 60_000;

/** The binaries the cluster needs, each with the Debian package that provides it. */
export function missingPackages(): string[] {
  const missing: string[] = [];
  if (postgresBin() === undefined) missing.push('postgresql');
  if (!onPath('redis-server')) missing.push('redis-server');
  if (!onPath('kamailio')) missing.push('kamailio');
  return missing;
}

function onPath(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** The newest `/usr/lib/postgresql/<version>/bin` holding initdb, as .ci/postgres-cluster.sh finds it. */
function postgresBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))).sort((a, b) => Number(a) - Number(b));
  const newest = versions.at(-1);
  return newest === undefined ? undefined : join(root, newest, 'bin');
}

/** PostgreSQL refuses to run as root: as root, the cluster belongs to the `postgres` user. */
function postgresOwner(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const [uid, gid] = ['-u', '-g'].map((flag) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim()));
    return { uid: uid!, gid: gid! };
  } catch {
    throw new ClusterStartError("running as root, and there is no 'postgres' user to own the PostgreSQL cluster");
  }
}

/** A throw-away PostgreSQL in `dir` on 127.0.0.1:`port`, trust authentication on loopback, fsync off. */
export async function startPostgres(owned: Supervised[], dir: string, port: number): Promise<{ process: Supervised; url: string }> {
  const bin = postgresBin()!;
  const owner = postgresOwner();
  mkdirSync(dir, { recursive: true });
  if (owner) chownSync(dir, owner.uid, owner.gid);
  const data = join(dir, 'data');
  try {
    execFileSync(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8'], { stdio: 'pipe', ...owner });
  } catch (err) {
    throw new ClusterStartError(`PostgreSQL: initdb failed: ${String((err as { stderr?: Buffer }).stderr ?? err)}`);
  }
  // The server in the foreground (not pg_ctl's daemon), so it is our child and stopped by its pid.
  // SIGINT is PostgreSQL's fast shutdown.
  const process = startProcess('postgres', join(bin, 'postgres'), [
    '-D', data, '-h', '127.0.0.1', '-p', String(port), '-k', dir, '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off',
  ], { cwd: dir, env: { PATH: globalThis.process.env.PATH }, logFile: join(dir, 'server.log'), stopSignal: 'SIGINT', owned, ...owner });
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  await waitUntil('PostgreSQL', async () => {
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('SELECT 1');
      return true;
    } finally {
      await client.end().catch(() => undefined);
    }
  }, START_TIMEOUT_MS, process);
  return { process, url };
}

/** True when a RESP `PING` on `port` is answered `+PONG`. */
async function answersPing(port: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.setTimeout(1000, () => { socket.destroy(); resolve(false); });
    socket.once('error', () => resolve(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => { socket.destroy(); resolve(data.toString().startsWith('+PONG')); });
  });
}

/** redis-server on 127.0.0.1:`port`, nothing persisted. */
export async function startRedis(owned: Supervised[], dir: string, port: number): Promise<{ process: Supervised; url: string }> {
  mkdirSync(dir, { recursive: true });
  const process = startProcess('redis', 'redis-server', ['--bind', '127.0.0.1', '--port', String(port), '--dir', dir, '--save', '', '--appendonly', 'no', '--daemonize', 'no'],
    { cwd: dir, env: { PATH: globalThis.process.env.PATH }, logFile: join(dir, 'redis.log'), owned });
  await waitUntil('redis-server', () => answersPing(port), START_TIMEOUT_MS, process);
  return { process, url: `redis://127.0.0.1:${port}` };
}

/** An engine as the edge's dispatcher list names it. */
export interface EdgeDestination { nodeId: string; sipHost: string; sipPort: number }

/** The Kamailio edge on 127.0.0.1:`port`, dispatching over `engines` (set 1), its JSON-RPC on `rpcPort`. */
export async function startEdge(owned: Supervised[], dir: string, port: number, rpcPort: number, engines: readonly EdgeDestination[]): Promise<{ process: Supervised; rpcUrl: string }> {
  if (!existsSync(EDGE_CONFIG)) throw new ClusterStartError(`the edge's configuration ${EDGE_CONFIG} is missing`);
  mkdirSync(dir, { recursive: true });
  const list = join(dir, 'dispatcher.list');
  writeFileSync(list, engines.map((e) => `1 sip:${e.sipHost}:${e.sipPort} 0 0 duid=${e.nodeId}\n`).join(''));
  // -DD: the main process stays in the foreground and its children stop with it; -E: log to stderr.
  const process = startProcess('edge', 'kamailio', [
    '-f', EDGE_CONFIG, '-DD', '-E', '-Y', dir, '-P', join(dir, 'kamailio.pid'), '-w', dir, '-m', '64', '-M', '8',
    '-A', 'EDGE_IP=127.0.0.1', '-A', `EDGE_PORT=${port}`, '-A', `RPC_PORT=${rpcPort}`, '-A', `DISPATCHER_LIST="${list}"`,
  ], { cwd: dir, env: { PATH: globalThis.process.env.PATH }, logFile: join(dir, 'kamailio.log'), owned });
  await waitUntil('the Kamailio edge', () => answersOptions('127.0.0.1', port), START_TIMEOUT_MS, process);
  return { process, rpcUrl: `http://127.0.0.1:${rpcPort}/RPC` };
}

/** What every gateway process of the cluster shares. */
export interface SharedSettings {
  databaseUrl: string;
  redisUrl: string;
  clusterSecret: string;
  secretKey: string;
  recordingsDir: string;
}

export interface GatewayRole {
  name: string;
  role: 'api' | 'engine';
  httpPort: number;
  /** Engines only. */
  engine?: { nodeId: string; sipHost: string; sipPort: number; internalPort: number; rtpMin: number; rtpMax: number; edgeSip: string; edgeRpcUrl: string };
}

/** The settings without an environment variable, as the process's config file (docs/CONFIGURATION.md). */
function configFile(dir: string): string {
  const file = join(dir, 'config.yaml');
  writeFileSync(file, [
    `data_dir: ${JSON.stringify(join(dir, 'data'))}`,
    'log_level: info',
    // Plain HTTP on loopback: the console's session cookie cannot be Secure.
    'http:\n  cookie_secure: false',
    // INVITEs arrive through the edge, which names each carrier's address (docs/ARCHITECTURE.md "Trusted edge proxies").
    'sip:\n  trusted_proxies: ["127.0.0.1"]',
    'calls:\n  allow_private_agent_urls: true',
    'shutdown:\n  drain_seconds: 5',
    '',
  ].join('\n'));
  return file;
}

/** The outside environment without any VGW_* setting, so only the cluster's apply. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('VGW_')));
}

/** One gateway process (`node --import tsx src/main.ts`), resolved once its /readyz answers 200. */
export async function startGatewayRole(owned: Supervised[], dir: string, shared: SharedSettings, role: GatewayRole): Promise<Supervised> {
  mkdirSync(dir, { recursive: true });
  const env: NodeJS.ProcessEnv = {
    ...cleanEnv(),
    VGW_CONFIG: configFile(dir), VGW_ROLE: role.role, VGW_DATABASE_URL: shared.databaseUrl, VGW_REDIS_URL: shared.redisUrl,
    VGW_CLUSTER_SECRET: shared.clusterSecret, VGW_SECRET_KEY: shared.secretKey, VGW_RECORDINGS_DIR: shared.recordingsDir,
    VGW_HTTP_HOST: '127.0.0.1', VGW_HTTP_PORT: String(role.httpPort),
  };
  const e = role.engine;
  if (e) {
    Object.assign(env, {
      VGW_NODE_ID: e.nodeId, VGW_SIP_HOST: e.sipHost, VGW_SIP_PORT: String(e.sipPort), VGW_INTERNAL_PORT: String(e.internalPort),
      VGW_RTP_PORT_MIN: String(e.rtpMin), VGW_RTP_PORT_MAX: String(e.rtpMax), VGW_SIP_OUTBOUND_PROXY: e.edgeSip,
      VGW_EDGE_RPC_URL: e.edgeRpcUrl, VGW_EDGE_DESTINATION: `sip:${e.sipHost}:${e.sipPort}`,
    });
  }
  const process = startProcess(role.name, globalThis.process.execPath, ['--import', 'tsx', join(ROOT, 'src', 'main.ts')], { cwd: ROOT, env, logFile: join(dir, 'gateway.log'), owned });
  await waitUntil(role.name, () => answers200(`http://127.0.0.1:${role.httpPort}/readyz`), START_TIMEOUT_MS * 2, process);
  return process;
}
