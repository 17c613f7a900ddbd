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

export function cpuMeter(w: Watched): () => CpuUse {
  const read = (): CpuUse => ({
    gateway: cpuSeconds(w.gateway), agent: cpuSeconds(w.agent), sipps: w.sipps.reduce((s, pid) => s + cpuSeconds(pid), 0),
    gatewayRunQueueWait: runQueueWaitNs(w.gateway) / 1e9,
  });
  const start = read();
  const t0 = performance.now();
  return () => {
    const end = read();
    const wall = (performance.now() - t0) / 1000;
    const per = (k: keyof CpuUse): number => (end[k] - start[k]) / wall;
    return { gateway: per('gateway'), agent: per('agent'), sipps: per('sipps'), gatewayRunQueueWait: per('gatewayRunQueueWait') };
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
