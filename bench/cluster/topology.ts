/**
 * @module The cluster benchmark's topology on loopback (docs/CLUSTER.md "Topology"): PostgreSQL,
 * Redis and the Kamailio edge as `npm run cluster` starts them (scripts/cluster-services.ts), the
 * gateway's `engine` and `api` roles from the compiled build (`dist/main.js`, bench/compiled.ts),
 * each with a config file of the benchmark's (rate limits lifted, quick shutdown), and the CPU
 * seconds of each part's whole process group.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { answers200, portOn, startProcess, waitUntil, type Supervised } from '../../scripts/cluster-processes.js';
import { startEdge, startPostgres, startRedis } from '../../scripts/cluster-services.js';
import { CALLER_NUMBER } from '../calls/call-driver.js';
import { REPO } from '../compiled.js';

/** One engine's fixed identity: restarting it keeps its node id, addresses and ports. */
export interface EngineSlot {
  name: string;
  nodeId: string;
  sipHost: string;
  sipPort: number;
  httpPort: number;
  internalPort: number;
  rtp: { min: number; max: number };
}

export interface Cluster {
  dir: string;
  postgres: Supervised;
  redis: Supervised;
  edge: Supervised;
  edgeSip: string;
  /** The edge's JSON-RPC (docs/CLUSTER.md "The SIP edge"). */
  edgeRpcUrl: string;
  api: Supervised;
  apiBase: string;
  apiKey: string;
  slots: readonly EngineSlot[];
  /** Starts (or restarts) engine `i`; `viaEdge`: with `sip.outbound_proxy` at the edge. */
  startEngine(i: number, viaEdge: boolean): Promise<Supervised>;
  /** Every process started, in start order (stopped in reverse by {@link stopCluster}). */
  owned: Supervised[];
}

interface Shared { databaseUrl: string; redisUrl: string; secret: string; secretKey: string; rpcUrl: string; carriersFile: string }

/** The config file of one gateway process: what has no environment variable (docs/CONFIGURATION.md). */
function configFile(dir: string, carriersFile: string, lines: readonly string[]): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'config.yaml');
  writeFileSync(file, [
    `data_dir: ${JSON.stringify(join(dir, 'data'))}`,
    `carriers_file: ${JSON.stringify(carriersFile)}`,
    'log_level: warn',
    // One key drives every call and the benchmark's polling: the per-key limit is lifted.
    'http:\n  rate_limit_per_second: 1000000\n  rate_limit_burst: 1000000',
    'calls:\n  max_concurrent_per_tenant: 10000\n  allow_private_agent_urls: true\n  ring_timeout_seconds: 600',
    'sandbox:\n  announcement: ""',
    // Restarts between rounds must not wait out the default 30 s drain: no call is live then.
    'shutdown:\n  drain_seconds: 1',
    ...lines,
    '',
  ].join('\n'));
  return file;
}

function baseEnv(shared: Shared, config: string, role: 'api' | 'engine', httpPort: number): NodeJS.ProcessEnv {
  const outside = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('VGW_')));
  return {
    ...outside, VGW_CONFIG: config, VGW_ROLE: role, VGW_DATABASE_URL: shared.databaseUrl, VGW_REDIS_URL: shared.redisUrl,
    VGW_CLUSTER_SECRET: shared.secret, VGW_SECRET_KEY: shared.secretKey, VGW_HTTP_HOST: '127.0.0.1', VGW_HTTP_PORT: String(httpPort),
  };
}

/** A tenant made with the operator CLI on the empty database, holding the calling number on every carrier. */
function createTenant(shared: Shared, config: string, carriers: readonly string[]): string {
  const vgw = (...args: string[]): string => execFileSync(process.execPath, ['dist/cli/vgw.js', ...args], {
    cwd: REPO, env: { ...process.env, VGW_CONFIG: config, VGW_DATABASE_URL: shared.databaseUrl }, encoding: 'utf8',
  });
  const created = JSON.parse(vgw('tenant', 'create', 'bench', '--init')) as { api_key: string; tenant: { id: string } };
  for (const carrier of carriers) vgw('number', 'add', created.tenant.id, CALLER_NUMBER, '--carrier', carrier);
  return created.api_key;
}

/**
 * PostgreSQL, Redis, the edge (its dispatcher list naming `engineCount` engines on 127.0.0.2…)
 * and the API process. No engine runs yet: {@link Cluster.startEngine} starts them.
 */
export async function startCluster(dir: string, owned: Supervised[], carriersYaml: string, carriers: readonly string[], engineCount: number): Promise<Cluster> {
  const postgres = await startPostgres(owned, join(dir, 'postgres'), await portOn('127.0.0.1'));
  const redis = await startRedis(owned, join(dir, 'redis'), await portOn('127.0.0.1'));
  const slots: EngineSlot[] = [];
  for (let i = 0; i < engineCount; i += 1) {
    const sipHost = `127.0.0.${i + 2}`;
    // Even RTP ranges of 2,000 ports per engine, away from the far ends' and the load agent's.
    slots.push({
      name: `engine-${String.fromCharCode(97 + i)}`, nodeId: `bench-${String.fromCharCode(97 + i)}`, sipHost, sipPort: await portOn(sipHost),
      httpPort: await portOn('127.0.0.1'), internalPort: await portOn('127.0.0.1'), rtp: { min: 40000 + i * 2000, max: 41999 + i * 2000 },
    });
  }
  const edgePort = await portOn('127.0.0.1');
  const edge = await startEdge(owned, join(dir, 'edge'), edgePort, await portOn('127.0.0.1'), slots);
  const carriersFile = join(dir, 'carriers.yaml');
  writeFileSync(carriersFile, carriersYaml);
  const shared: Shared = {
    databaseUrl: postgres.url, redisUrl: redis.url, secret: randomBytes(24).toString('hex'), secretKey: randomBytes(32).toString('hex'),
    rpcUrl: edge.rpcUrl, carriersFile,
  };
  const apiDir = join(dir, 'api');
  const apiConfig = configFile(apiDir, carriersFile, []);
  const apiKey = createTenant(shared, apiConfig, carriers);
  const apiPort = await portOn('127.0.0.1');
  const api = startProcess('api', process.execPath, ['dist/main.js'], { cwd: REPO, env: baseEnv(shared, apiConfig, 'api', apiPort), logFile: join(apiDir, 'gateway.log'), owned });
  const apiBase = `http://127.0.0.1:${apiPort}`;
  await waitUntil('the API process', () => answers200(`${apiBase}/readyz`), 120_000, api);

  const running = new Map<number, Supervised>();
  const startEngine = async (i: number, viaEdge: boolean): Promise<Supervised> => {
    const s = slots[i]!;
    const previous = running.get(i);
    if (previous?.running()) await previous.stop();
    const engineDir = join(dir, s.name);
    const config = configFile(engineDir, carriersFile, [
      `sip:\n  host: ${s.sipHost}\n  port: ${s.sipPort}\n  trusted_proxies: ["127.0.0.1"]${viaEdge ? `\n  outbound_proxy: "sip:127.0.0.1:${edgePort}"` : ''}`,
      `rtp:\n  port_min: ${s.rtp.min}\n  port_max: ${s.rtp.max}`,
      'cluster:\n  capacity: 5000',
    ]);
    const env = {
      ...baseEnv(shared, config, 'engine', s.httpPort), VGW_NODE_ID: s.nodeId, VGW_INTERNAL_PORT: String(s.internalPort),
      VGW_EDGE_RPC_URL: shared.rpcUrl, VGW_EDGE_DESTINATION: `sip:${s.sipHost}:${s.sipPort}`,
    };
    const engine = startProcess(s.name, process.execPath, ['dist/main.js'], { cwd: REPO, env, logFile: join(engineDir, 'gateway.log'), owned });
    running.set(i, engine);
    await waitUntil(s.name, () => answers200(`http://127.0.0.1:${s.httpPort}/readyz`), 120_000, engine);
    // The API process places calls only on engines whose lease it sees (docs/CLUSTER.md "Live state in Redis").
    await waitUntil(`${s.name}'s lease`, async () => redisHas(redis.url, `vgw:node:${s.nodeId}`), 20_000, engine);
    return engine;
  };
  return { dir, postgres: postgres.process, redis: redis.process, edge: edge.process, edgeSip: `sip:127.0.0.1:${edgePort}`, edgeRpcUrl: edge.rpcUrl, api, apiBase, apiKey, slots, startEngine, owned };
}

/** True when `key` exists in the Redis at `url` (one EXISTS over a plain RESP socket). */
async function redisHas(url: string, key: string): Promise<boolean> {
  const { connect } = await import('node:net');
  const port = Number(new URL(url).port);
  return new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.setTimeout(1000, () => { socket.destroy(); resolve(false); });
    socket.once('error', () => resolve(false));
    socket.once('connect', () => socket.write(`*2\r\n$6\r\nEXISTS\r\n$${Buffer.byteLength(key)}\r\n${key}\r\n`));
    socket.once('data', (data) => { socket.destroy(); resolve(data.toString().startsWith(':1')); });
  });
}

/**
 * Requests the edge has handled statefully so far (Kamailio's `tmx:UAS_transactions`): INVITEs
 * and BYEs relayed for engines count, the edge's own OPTIONS probes do not (they are UAC ones).
 * Proof that a round's calls went through the edge, or did not.
 */
export async function edgeTransactions(rpcUrl: string): Promise<number> {
  const res = await fetch(rpcUrl, {
    method: 'POST', headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(5000),
    body: JSON.stringify({ jsonrpc: '2.0', method: 'stats.get_statistics', params: ['tmx:'], id: 1 }),
  });
  const body = await res.json() as { result?: string[] };
  const line = body.result?.find((l) => l.startsWith('tmx:UAS_transactions')) ?? '';
  return Number(/=\s*(\d+)/.exec(line)?.[1] ?? NaN);
}

/** Stops every process started, last first, each by its pid. */
export async function stopCluster(owned: Supervised[]): Promise<void> {
  for (const p of [...owned].reverse()) if (p.running()) await p.stop();
}

/**
 * CPU seconds (user + system, with those of reaped children) of every process in the process
 * group `pgid`: PostgreSQL's backends and Kamailio's workers are children in their leader's group.
 */
export function groupCpuSeconds(pgid: number): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited since the listing
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) !== pgid) continue;
    total += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
  }
  // Linux reports times in clock ticks of 1/100 s (USER_HZ).
  return total / 100;
}
