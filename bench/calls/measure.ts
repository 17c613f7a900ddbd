/**
 * @module Measuring windows of the calls benchmark: CPU of each process over a window, resident
 * memory samples, and each call's agent frame counts turned into the share of expected frames.
 */
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
}

export function cpuMeter(w: Watched): () => CpuUse {
  const read = (): CpuUse => ({ gateway: cpuSeconds(w.gateway), agent: cpuSeconds(w.agent), sipps: w.sipps.reduce((s, pid) => s + cpuSeconds(pid), 0) });
  const start = read();
  const t0 = performance.now();
  return () => {
    const end = read();
    const wall = (performance.now() - t0) / 1000;
    return { gateway: (end.gateway - start.gateway) / wall, agent: (end.agent - start.agent) / wall, sipps: (end.sipps - start.sipps) / wall };
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
