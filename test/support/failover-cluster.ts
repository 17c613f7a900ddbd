/**
 * @module A cluster of real processes on loopback for the failover tests (docs/CLUSTER.md
 * "Topology"): two `engine` processes and one `api` process (src/main.ts, each its own child, so
 * SIGKILL is a real process kill) over one SQLite data folder (docs/ARCHITECTURE.md "Process
 * roles") and one redis-server, behind the Kamailio edge started from sbc-config/kamailio/. The
 * tenant is made with the operator's CLI (`vgw tenant create`, `vgw number add`) and its DID
 * routed, through the API process, to an imported agent: the fake custom agent in this process.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Test } from 'tap';
import { portOn } from '../../scripts/cluster-processes.js';
import { FakeCustomAgent } from './fake-agent-servers/custom-agent-server.js';
import { startGatewayProcess, type GatewayProcess } from './gateway-process.js';
import { edgeAddress, startKamailioCluster, type KamailioCluster } from './kamailio-cluster.js';
import type { TestRedis } from './redis.js';

const ROOT = join(import.meta.dirname, '..', '..');
const ENGINE_READY = /"port":(\d+),.*"msg":"engine listening"/;

export interface ClusterEngine {
  nodeId: string;
  /** Its SIP address (`sip.host`), the one its Contact names. */
  ip: string;
  /** Its line in the edge's dispatcher list. */
  destination: string;
  process: GatewayProcess;
  /** The environment it was started with: a restart under the same node id reuses it. */
  env: Record<string, string>;
}

export interface FailoverCluster {
  edge: KamailioCluster;
  engines: ClusterEngine[];
  api: GatewayProcess;
  /** The shared data folder (the SQLite database is `gateway.db` in it). */
  dataDir: string;
  tenantId: string;
  /** The tenant's live API key. */
  key: string;
  bot: FakeCustomAgent;
}

export interface FailoverClusterOptions {
  edgeIp: string;
  engineIps: readonly string[];
  /** The carrier's address: the `trunk` carrier's inbound source. */
  carrierIp: string;
  did: string;
  /** `calls.max_concurrent_per_tenant`, across the engines through Redis. */
  tenantLimit: number;
}

/** `vgw <args>` (src/cli/vgw.ts) against the cluster's config; its JSON output. */
async function vgw(configFile: string, args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', join(ROOT, 'src', 'cli', 'vgw.ts'), ...args], {
    cwd: ROOT, env: { ...process.env, VGW_CONFIG: configFile },
  });
  return JSON.parse(stdout) as Record<string, unknown>;
}

/** An even RTP range of 400 ports per engine, apart from each other. */
function rtpRanges(count: number): { min: number; max: number }[] {
  const base = 30000 + 2 * Math.floor(Math.random() * (4800 - count * 200));
  return Array.from({ length: count }, (_, i) => ({ min: base + i * 400, max: base + i * 400 + 399 }));
}

/** The config every process reads; what differs per engine comes from its environment. */
function writeConfig(dir: string, o: FailoverClusterOptions): { configFile: string; dataDir: string } {
  const dataDir = join(dir, 'data');
  const carriersFile = join(dir, 'carriers.yaml');
  writeFileSync(carriersFile, `carriers:\n  - name: trunk\n    inbound:\n      sources: ['${o.carrierIp}']\n    outbound:\n      uri: "sip:${o.carrierIp}:5060"\n    options_ping_s: 0\n`);
  const configFile = join(dir, 'config.yaml');
  writeFileSync(configFile, [
    `data_dir: ${JSON.stringify(dataDir)}`,
    `carriers_file: ${JSON.stringify(carriersFile)}`,
    'log_level: info',
    'http:\n  host: 127.0.0.1\n  port: 0',
    'internal:\n  port: 0',
    // The edge names the carrier's address in X-VGW-Source (docs/ARCHITECTURE.md "Trusted edge proxies").
    `sip:\n  trusted_proxies: ['${o.edgeIp}']`,
    'sandbox:\n  ring_ms: 200\n  announcement: ""',
    // sipp sends no RTP: without media_timeout 0 the surviving calls would end on their own.
    `calls:\n  allow_private_agent_urls: true\n  max_concurrent_per_tenant: ${o.tenantLimit}\n  media_timeout_seconds: 0`,
    '',
  ].join('\n'));
  return { configFile, dataDir };
}

/**
 * Starts `engine` again with the environment of its first start (same node id, SIP address and
 * RTP range), as an operator's supervisor would after a crash; `engine.process` becomes the new
 * process, resolved once it says "engine listening".
 */
export async function restartEngine(t: Test, engine: ClusterEngine): Promise<GatewayProcess> {
  engine.process = await startGatewayProcess(t, engine.env, ENGINE_READY);
  return engine.process;
}

/** Starts the whole topology for `t`; everything is stopped by its pid at teardown. */
export async function startFailoverCluster(t: Test, redis: TestRedis, o: FailoverClusterOptions): Promise<FailoverCluster> {
  const { configFile, dataDir } = writeConfig(t.testdir({}), o);
  const at = await edgeAddress(o.edgeIp);
  const common = { VGW_CONFIG: configFile, VGW_CLUSTER_SECRET: randomBytes(24).toString('hex'), VGW_REDIS_URL: redis.url, VGW_NODE_CAPACITY: '20' };
  const ranges = rtpRanges(o.engineIps.length);
  const engines: ClusterEngine[] = [];
  // One after the other: the first engine creates the tables.
  for (const [i, ip] of o.engineIps.entries()) {
    const nodeId = `engine-${String.fromCharCode(97 + i)}`;
    const sipPort = await portOn(ip);
    const destination = `sip:${ip}:${sipPort}`;
    const env = {
      ...common, VGW_ROLE: 'engine', VGW_NODE_ID: nodeId, VGW_SIP_HOST: ip, VGW_SIP_PORT: String(sipPort),
      VGW_RTP_PORT_MIN: String(ranges[i]!.min), VGW_RTP_PORT_MAX: String(ranges[i]!.max),
      VGW_SIP_OUTBOUND_PROXY: at.uri, VGW_EDGE_RPC_URL: at.rpcUrl, VGW_EDGE_DESTINATION: destination,
    };
    const process = await startGatewayProcess(t, env, ENGINE_READY);
    engines.push({ nodeId, ip, destination, process, env });
  }
  const api = await startGatewayProcess(t, { ...common, VGW_ROLE: 'api' });
  const edge = await startKamailioCluster(t, at, engines.map((e) => ({ destination: e.destination, duid: e.nodeId })));

  const created = await vgw(configFile, ['tenant', 'create', 'failover']);
  const tenantId = String((created.tenant as { id: string }).id);
  const key = String(created.api_key);
  await vgw(configFile, ['number', 'add', tenantId, o.did, '--carrier', 'trunk']);
  const bot = await FakeCustomAgent.start();
  t.teardown(() => bot.core.close());
  const imported = await fetch(`${api.base}/v1/agents/import`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ provider: 'custom', external_agent_id: 'failover-bot', connection_mode: 'media_bridge', websocket_url: bot.url, did_number: o.did }),
  });
  if (imported.status !== 200) throw new Error(`the agent import was refused: ${imported.status} ${await imported.text()}`);
  return { edge, engines, api, dataDir, tenantId, key, bot };
}
