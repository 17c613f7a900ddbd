/**
 * @module Measuring windows of the calls benchmark: CPU of each process over a window, resident
 * memory samples, and each call's agent frame counts turned into the share of expected frames.
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { percentile } from './api-load.js';
import { FRAME_MS, type AgentCallCounts } from './protocol.js';
import { cpuSeconds, rssKiB, type LoadAgent } from './processes.js';

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export const median = (values: readonly number[]): number => percentile([...values].sort((a, b) => a - b), 50);

/** The processes whose CPU a window reports. */
export interface Watched {
  gateway: number;
  agent: number;
  sipps: readonly number[];
}

/** Cores used (CPU seconds per wall second) by each watched process over a window. */
export interface CpuUse {
  gateway: number;
  agent: number;
  sipps: number;
  /**
   * Share of the window the gateway's main thread (its event loop) spent runnable but waiting
   * for a CPU, from /proc/PID/schedstat: time lost to other processes on the host, not to its own work.
   */
  gatewayRunQueueWait: number;
}

/** Nanoseconds the thread `pid` has waited on a run queue (second field of /proc/PID/schedstat). */
function runQueueWaitNs(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[1]);
}

/** Cores one process used over a window, and the share of it its main thread waited for a core. */
export function processMeter(pid: number): () => { cores: number; runQueueWait: number } {
  const read = (): { cpu: number; wait: number } => ({ cpu: cpuSeconds(pid), wait: runQueueWaitNs(pid) / 1e9 });
  const start = read();
  const t0 = performance.now();
  return () => {
    const end = read();
    const wall = (performance.now() - t0) / 1000;
    return { cores: (end.cpu - start.cpu) / wall, runQueueWait: (end.wait - start.wait) / wall };
  };
}

export function cpuMeter(w: Watched): () => CpuUse {
  const gateway = processMeter(w.gateway);
  const agent = processMeter(w.agent);
  const sipps = w.sipps.map(processMeter);
  return () => {
    const g = gateway();
    return { gateway: g.cores, agent: agent().cores, sipps: sipps.reduce((sum, sipp) => sum + sipp().cores, 0), gatewayRunQueueWait: g.runQueueWait };
  };
}

/** Median VmRSS (KiB) of `pid` over `samples` readings `everyMs` apart. */
export async function rssMedian(pid: number, samples = 5, everyMs = 500): Promise<number> {
  const values: number[] = [];
  for (let i = 0; i < samples; i += 1) {
    values.push(rssKiB(pid));
    if (i < samples - 1) await sleep(everyMs);
  }
  return median(values);
}

/** Audio over a window, per call: frames received against 50 per second. */
export interface AudioWindow {
  calls: number;
  seconds: number;
  /** Calls whose agent socket closed during the window (the call ended). */
  dropped: number;
  /** Share of expected frames carrying the agent's own audio back, per call: lowest, 1st percentile, median. */
  echoedMin: number;
  echoedP1: number;
  echoedMedian: number;
  /** Over all calls: echoed and all received frames against expected. */
  echoedTotal: number;
  receivedTotal: number;
  /** Frames the load agent sent against expected (below 1 means the generator itself fell behind). */
  sentTotal: number;
  /** Calls under the threshold. */
  below: number;
}

export async function audioWindow(agent: LoadAgent, ids: ReadonlySet<string>, ms: number, threshold: number, during?: () => Promise<void>): Promise<AudioWindow> {
  const pick = (all: AgentCallCounts[]) => new Map(all.filter((c) => ids.has(c.callId)).map((c) => [c.callId, c]));
  const before = pick(await agent.snapshot());
  const t0 = performance.now();
  if (during) await during();
  else await sleep(ms);
  const after = pick(await agent.snapshot());
  const seconds = (performance.now() - t0) / 1000;
  const expected = (seconds * 1000) / FRAME_MS;
  const echoed: number[] = [];
  let received = 0;
  let sent = 0;
  let dropped = 0;
  for (const [id, end] of after) {
    const start = before.get(id);
    if (!start || start.closed) continue;
    if (end.closed) dropped += 1;
    echoed.push((end.echoed - start.echoed) / expected);
    received += end.received - start.received;
    sent += end.sent - start.sent;
  }
  dropped += [...before.keys()].filter((id) => !after.has(id)).length;
  echoed.sort((a, b) => a - b);
  const n = echoed.length;
  return {
    calls: n, seconds, dropped,
    echoedMin: echoed[0] ?? NaN, echoedP1: percentile(echoed, 1), echoedMedian: percentile(echoed, 50),
    echoedTotal: echoed.reduce((s, v) => s + v, 0) / Math.max(1, n),
    receivedTotal: received / Math.max(1, n * expected),
    sentTotal: sent / Math.max(1, n * expected),
    below: echoed.filter((v) => v < threshold).length,
  };
}

export const load1 = (): number => loadavg()[0] ?? NaN;

/** Host-wide count of UDP datagrams dropped because a socket's receive buffer was full (/proc/net/snmp). */
export function udpReceiveBufferErrors(): number {
  const lines = readFileSync('/proc/net/snmp', 'utf8').split('\n').filter((l) => l.startsWith('Udp:'));
  const head = lines[0]?.split(/\s+/) ?? [];
  const values = lines[1]?.split(/\s+/) ?? [];
  return Number(values[head.indexOf('RcvbufErrors')] ?? NaN);
}

/** Figures from the gateway's /metrics (prom-client's default collectors). */
export interface GatewayMetrics {
  heapUsedKiB: number;
  externalKiB: number;
  /** Event-loop delay since the previous scrape (prom-client resets its histogram on each scrape). */
  lagP99Ms: number;
  lagMaxMs: number;
}

export async function gatewayMetrics(base: string): Promise<GatewayMetrics> {
  const text = await (await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
  const metric = (name: string): number => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  return {
    heapUsedKiB: metric('vgw_nodejs_heap_size_used_bytes') / 1024,
    externalKiB: metric('vgw_nodejs_external_memory_bytes') / 1024,
    lagP99Ms: metric('vgw_nodejs_eventloop_lag_p99_seconds') * 1000,
    lagMaxMs: metric('vgw_nodejs_eventloop_lag_max_seconds') * 1000,
  };
}

/** What the process answering the API saw of a window, from its own /metrics. */
export interface ServerSide {
  /** Requests to `route` it answered in the window, and the share that took it over 10 ms from routing to the answer's body (its request-duration histogram). */
  requests: number;
  over10ms: number;
  /** Its garbage collections' pauses over the window, in all (ms), and its event loop's delay (prom-client samples every 10 ms, so an idle loop reads about 10 ms). */
  gcMs: number;
  lagP99Ms: number;
  lagMaxMs: number;
  /** Its CPU (cores) and the share of the window its main thread was runnable but waited for a core. */
  cores: number;
  runQueueWait: number;
}

/**
 * Starts a window on the process `pid` at `base` (its event-loop histogram resets on this scrape);
 * the function returned ends it. The process's own view of its answers, beside the client's,
 * tells its work apart from the wait for a core on a shared host.
 */
export async function serverSideWindow(pid: number, base: string, route: string): Promise<() => Promise<ServerSide>> {
  const scrape = async (): Promise<string> => (await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
  const sum = (text: string, name: string, labels: (l: string) => boolean): number =>
    [...text.matchAll(new RegExp(`^${name}\\{([^}]*)\\} (\\S+)$`, 'gm'))].filter((m) => labels(m[1]!)).reduce((s, m) => s + Number(m[2]), 0);
  const ofRoute = (l: string): boolean => l.includes('method="GET"') && l.includes(`route="${route}"`);
  const read = (text: string) => ({
    count: sum(text, 'vgw_http_request_duration_seconds_count', ofRoute),
    within10ms: sum(text, 'vgw_http_request_duration_seconds_bucket', (l) => ofRoute(l) && l.includes('le="0.01"')),
    gcSeconds: sum(text, 'vgw_nodejs_gc_duration_seconds_sum', () => true),
  });
  const cpu = processMeter(pid);
  const start = read(await scrape());
  return async () => {
    const used = cpu();
    const text = await scrape();
    const end = read(text);
    const requests = end.count - start.count;
    const metric = (name: string): number => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
    return {
      requests, over10ms: requests > 0 ? 1 - (end.within10ms - start.within10ms) / requests : 0, gcMs: (end.gcSeconds - start.gcSeconds) * 1000,
      lagP99Ms: metric('vgw_nodejs_eventloop_lag_p99_seconds') * 1000, lagMaxMs: metric('vgw_nodejs_eventloop_lag_max_seconds') * 1000,
      ...used,
    };
  };
}

/**
 * Starts a window on the host's CPU time (/proc/stat); the function returned gives the share the
 * hypervisor took from this machine's cores over it (steal), which no priority inside can win back.
 */
export function stealWindow(): () => number {
  const read = (): { steal: number; total: number } => {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
    return { steal: fields[7] ?? 0, total: fields.reduce((s, v) => s + v, 0) };
  };
  const start = read();
  return () => {
    const end = read();
    return end.total > start.total ? (end.steal - start.steal) / (end.total - start.total) : 0;
  };
}
