/**
 * @module The INVITE flood rig: the whole gateway in this process (log level warn, log lines
 * counted rather than kept, so a flood does not grow the test's own memory) with a carrier trunk
 * taking calls from loopback, a tenant limited to `capacity` concurrent calls, and a DID routed
 * to a sip_trunk agent whose SIP edge is a sipp `uas` echoing RTP; plus the sipp runs and what
 * the test reads from them.
 */
import { readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Test } from 'tap';
import { createLogger } from '../../../src/common/logger.js';
import { loadConfig } from '../../../src/config/load-config.js';
import { startGateway, type Gateway } from '../../../src/gateway.js';
import type { ApiBody } from '../../support/gateway-harness.js';
import { tempWorkdir } from '../../support/peers.js';
import { freeMediaPort, freePort, startSipp, type SippRun } from '../../support/sip-sipp.js';

export const FLOOD_SCENARIOS = join(import.meta.dirname, '..', 'scenarios');
export const DID = '+15550177';

export interface FloodGateway {
  gateway: Gateway;
  liveKey: string;
  /** Log lines at warn and above, counted by message. */
  logCounts: Map<string, number>;
  api(method: string, path: string, body?: unknown): Promise<{ status: number; body: ApiBody }>;
  /** SIP messages the gateway's per-source flood protection dropped so far (`vgw_sip_dropped_total`). */
  rateLimited(): Promise<number>;
}

/** One sipp process in its own folder (with `pcap` linked to the Debian captures). */
export interface SippProc {
  run: SippRun;
  cwd: string;
  port: number;
}

export async function startSippIn(t: Test, args: string[]): Promise<SippProc> {
  const cwd = tempWorkdir(t);
  symlinkSync('/usr/share/sip-tester', join(cwd, 'pcap'));
  const [port, media] = [await freePort(), await freeMediaPort()];
  const run = startSipp(t, cwd, [...args, '-i', '127.0.0.1', '-p', String(port), '-mp', String(media)]);
  return { run, cwd, port };
}

/** The gateway with the edge sipp as its agent and `capacity` as the tenant's concurrent-call limit. */
export async function startFloodGateway(t: Test, capacity: number, edgePort: number): Promise<FloodGateway> {
  const dir = t.testdir({});
  const carriersFile = join(dir, 'carriers.yaml');
  writeFileSync(carriersFile, "carriers:\n  - name: trunk\n    inbound:\n      sources: ['127.0.0.1']\n    options_ping_s: 0\n");
  const configFile = join(dir, 'config.yaml');
  const rtpMin = 30000 + 2 * Math.floor(Math.random() * 4800);
  writeFileSync(configFile, [
    `data_dir: ${JSON.stringify(join(dir, 'data'))}`,
    `carriers_file: ${JSON.stringify(carriersFile)}`,
    'log_level: warn',
    'http:\n  host: 127.0.0.1\n  port: 0\n  rate_limit_per_second: 10000\n  rate_limit_burst: 10000',
    'sip:\n  host: 127.0.0.1\n  port: 0',
    `rtp:\n  port_min: ${rtpMin}\n  port_max: ${rtpMin + 399}`,
    'sandbox:\n  ring_ms: 50\n  announcement: ""',
    `calls:\n  allow_private_agent_urls: true\n  allow_private_sip_targets: true\n  ring_timeout_seconds: 10\n  max_concurrent_per_tenant: ${capacity}`,
  ].join('\n'));
  const config = loadConfig({ env: { VGW_CONFIG: configFile } });
  const logCounts = new Map<string, number>();
  const logger = createLogger({
    level: 'warn',
    // The message is read with a pattern, not JSON.parse: at thousands of lines a second the test's own parsing would compete with the gateway.
    destination: { write: (line: string) => { const msg = /"msg":"((?:[^"\\]|\\.)*)"/.exec(line)?.[1] ?? '?'; logCounts.set(msg, (logCounts.get(msg) ?? 0) + 1); } },
  });
  const gateway = await startGateway({ config, logger, announce: () => undefined });
  t.teardown(() => gateway.stop('test over'));
  const tenant = await gateway.store.tenants.create('acme');
  const liveKey = (await gateway.store.apiKeys.create(tenant.id, 'live')).apiKey;
  const base = `http://127.0.0.1:${gateway.httpPort}`;
  const api: FloodGateway['api'] = async (method, path, body) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${liveKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : {}) as ApiBody };
  };
  await gateway.store.numbers.add(tenant.id, DID, 'trunk');
  const imported = await api('POST', '/v1/agents/import', {
    provider: 'custom', external_agent_id: 'edge-echo', connection_mode: 'sip_trunk', sip_uri: `sip:${DID}@127.0.0.1:${edgePort}`,
    sip_transport: 'udp', did_number: DID,
  });
  if (imported.status !== 200) throw new Error(`agent import failed: ${JSON.stringify(imported.body)}`);
  const rateLimited = async (): Promise<number> => {
    const text = await (await fetch(`${base}/metrics`)).text();
    return Number(/^vgw_sip_dropped_total\{reason="rate-limit"\} (\d+)/m.exec(text)?.[1] ?? 0);
  };
  return { gateway, liveKey, logCounts, api, rateLimited };
}

/** Audio counters of one live call, from its detail. */
export interface CallAudio {
  /** RTP from the caller (carrier sipp playing its capture). */
  fromCaller: number;
  /** RTP to the caller (the edge's echo, relayed). */
  toCaller: number;
  /** RTP from the agent edge. */
  fromAgent: number;
}

interface SessionStats {
  remote?: { packets_received?: number; packets_sent?: number };
  agent?: { rtp?: { packets_received?: number } | null };
}

export async function callAudio(gw: FloodGateway, id: string): Promise<CallAudio | undefined> {
  const r = await gw.api('GET', `/v1/calls/${id}`);
  if (r.status !== 200 || r.body.state !== 'active') return undefined;
  const s = (r.body.session ?? {}) as SessionStats;
  return { fromCaller: s.remote?.packets_received ?? 0, toCaller: s.remote?.packets_sent ?? 0, fromAgent: s.agent?.rtp?.packets_received ?? 0 };
}

/** Ids of the tenant's active calls. */
export async function activeCalls(gw: FloodGateway): Promise<string[]> {
  const r = await gw.api('GET', '/v1/calls?state=active&limit=200');
  return r.body.data.filter((c) => c.state === 'active').map((c) => c.id);
}

/** sipp's `-trace_counts` file: the last row's columns by name (message counters are cumulative). */
export function sippCounts(proc: SippProc): Record<string, number> {
  const file = readdirSync(proc.cwd).find((n) => n.endsWith('_counts.csv'));
  if (!file) return {};
  const lines = readFileSync(join(proc.cwd, file), 'utf8').trim().split('\n');
  const names = (lines[0] ?? '').split(';');
  const last = (lines[lines.length - 1] ?? '').split(';');
  return Object.fromEntries(names.map((n, i) => [n, Number(last[i] ?? 0)]).filter(([n]) => n !== ''));
}

/** Sum of the counters whose column names match `pattern` (e.g. /_503_Recv$/... as sipp names them). */
export function sumCounts(counts: Record<string, number>, pattern: RegExp): number {
  return Object.entries(counts).filter(([n]) => pattern.test(n)).reduce((a, [, v]) => a + (Number.isFinite(v) ? v : 0), 0);
}

/** The host's UDP datagrams dropped because a socket's receive buffer was full (/proc/net/snmp RcvbufErrors), or -1. */
export function udpReceiveBufferDrops(): number {
  try {
    const lines = readFileSync('/proc/net/snmp', 'utf8').split('\n').filter((l) => l.startsWith('Udp:'));
    const names = (lines[0] ?? '').split(/\s+/);
    const values = (lines[1] ?? '').split(/\s+/);
    const at = names.indexOf('RcvbufErrors');
    return at < 0 ? -1 : Number(values[at]);
  } catch {
    return -1;
  }
}

/** One step of the sustained-rate measurement. */
export interface RateStep {
  rate: number;
  calls: number;
  answered: number;
  retransmissions: number;
  passed: boolean;
}

/**
 * The call rate this gateway sustains on this host now, measured as bench:sip does (rising steps,
 * stopping at the first that fails) but with whole calls through the gateway: INVITE, the
 * sip_trunk leg to the edge, 200, ACK and BYE at once. A step passes when every call is answered
 * 200 without a single INVITE retransmission.
 */
export async function measureSustainedRate(t: Test, gw: FloodGateway, rates: readonly number[], seconds: number): Promise<{ rate: number; steps: RateStep[] }> {
  const target = `127.0.0.1:${gw.gateway.sip.udpPort}`;
  const steps: RateStep[] = [];
  let sustained = 0;
  for (const rate of rates) {
    const calls = Math.max(1, Math.round(rate * seconds));
    const proc = await startSippIn(t, [target, '-sf', join(FLOOD_SCENARIOS, 'flood-uac.xml'), '-s', DID, '-r', String(rate), '-m', String(calls), '-trace_counts', '-max_retrans', '3', '-timeout', `${seconds + 60}s`]);
    const done = await proc.run.done;
    const counts = sippCounts(proc);
    const answered = sumCounts(counts, /^5_200_Recv$/);
    const retransmissions = sumCounts(counts, /^0_INVITE_Retrans$/);
    const passed = done.code === 0 && answered === calls && retransmissions === 0;
    steps.push({ rate, calls, answered, retransmissions, passed });
    if (!passed) break;
    sustained = rate;
    // Let the calls' BYEs and transactions finish before the next step.
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  return { rate: sustained, steps };
}
