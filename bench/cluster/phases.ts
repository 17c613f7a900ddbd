/**
 * @module The cluster benchmark's measurements: the capacity ramp (agent calls with audio both
 * ways held through a window per step, the calls placed through the API process, which spreads
 * them over the live engines, docs/CLUSTER.md "Live state in Redis"), and rounds of call setups
 * timed from the POST to the call listed `active`.
 */
import { percentile } from '../calls/api-load.js';
import type { CallDriver, PlacedCall } from '../calls/call-driver.js';
import { audioWindow, load1, sleep, udpReceiveBufferErrors, type AudioWindow } from '../calls/measure.js';
import { agentsUp } from '../calls/phases.js';
import { cpuSeconds, type LoadAgent } from '../calls/processes.js';
import { edgeTransactions, groupCpuSeconds } from './topology.js';

/** A part whose CPU is reported: a process group (`pgid`) or the pids of plain child processes. */
export interface Part { name: string; pgid?: number; pids?: readonly number[] }

export interface Rig {
  driver: CallDriver;
  agent: LoadAgent;
  echoCarriers: readonly string[];
  /** Every call's agent must get back at least this share of its own frames for a step to pass. */
  threshold: number;
}

function partSeconds(p: Part): number {
  try {
    return p.pgid !== undefined ? groupCpuSeconds(p.pgid) : (p.pids ?? []).reduce((s, pid) => s + cpuSeconds(pid), 0);
  } catch {
    return NaN; // a process gone during the window
  }
}

/** CPU seconds used by each part from now until the returned function is called. */
export function cpuWindow(parts: readonly Part[]): () => Record<string, number> {
  const start = parts.map(partSeconds);
  return () => Object.fromEntries(parts.map((p, i) => [p.name, partSeconds(p) - start[i]!]));
}

/** Places `count` calls spread over the echo carriers at `rate` per second in all. */
export async function placeCalls(rig: Rig, count: number, rate: number): Promise<PlacedCall[]> {
  const k = rig.echoCarriers.length;
  const parts = rig.echoCarriers.map((carrier, i) => rig.driver.place(carrier, Math.floor(count / k) + (i < count % k ? 1 : 0), rate / k));
  return (await Promise.all(parts)).flat();
}

function failureList(calls: readonly PlacedCall[]): string[] {
  const counts = new Map<string, number>();
  for (const c of calls) if (c.failure) counts.set(c.failure, (counts.get(c.failure) ?? 0) + 1);
  return [...counts].map(([reason, n]) => `${n} × ${reason}`);
}

export interface CapacityStep {
  target: number;
  live: number;
  failedSetups: number;
  failures: string[];
  audio: AudioWindow;
  /** CPU seconds per part over the window, and the window's length. */
  cpu: Record<string, number>;
  windowS: number;
  udpDrops: number;
  load: number;
  passed: boolean;
}

/** Adds calls up to each target in turn; stops after the first step that loses audio or calls. */
export async function capacityRamp(rig: Rig, parts: readonly Part[], targets: readonly number[], rate: number, windowMs: number, label: string): Promise<CapacityStep[]> {
  const steps: CapacityStep[] = [];
  const live: PlacedCall[] = [];
  for (const target of targets) {
    const placed = await placeCalls(rig, target - live.length, rate);
    await rig.driver.settle(placed, 20_000);
    live.push(...placed.filter((c) => !c.failure && c.id));
    const missing = await agentsUp({ agent: rig.agent } as Parameters<typeof agentsUp>[0], live.map((c) => c.id!), 10_000);
    await sleep(2000);
    const drops0 = udpReceiveBufferErrors();
    const cpu = cpuWindow(parts);
    const audio = await audioWindow(rig.agent, new Set(live.map((c) => c.id!)), windowMs, rig.threshold);
    const used = cpu();
    const failed = placed.filter((c) => c.failure).length + missing;
    const step: CapacityStep = {
      target, live: audio.calls, failedSetups: failed, failures: failureList(placed), audio, cpu: used, windowS: audio.seconds,
      udpDrops: udpReceiveBufferErrors() - drops0, load: load1(),
      passed: failed === 0 && audio.dropped === 0 && audio.below === 0 && audio.calls === target,
    };
    steps.push(step);
    const cores = Object.entries(used).map(([n, s]) => `${n} ${(s / step.windowS).toFixed(2)}`).join(', ');
    console.log(`${label} ${target}: live ${audio.calls}, failed ${failed} ${step.failures.join(', ')}, echoed min ${(audio.echoedMin * 100).toFixed(1)} %, below ${audio.below}, dropped ${audio.dropped}, udp drops ${step.udpDrops}, cores: ${cores}, load ${step.load.toFixed(1)}`);
    if (!step.passed) break;
  }
  return steps;
}

export interface SetupRound {
  path: 'edge' | 'direct';
  placed: number;
  failed: number;
  failures: string[];
  /** POST → listed active, ms (over-stated by up to one 20 ms poll). */
  setupP50: number;
  setupP99: number;
  /** Calls set up per second: calls active over the time from the first POST to the last call seen active. */
  perSecond: number;
  /** Requests the edge handled statefully during the round (INVITEs and BYEs through it; 0 when straight). */
  edgeRequests: number;
  load: number;
}

/** `count` calls offered at `rate` per second, each hung up one second after it is seen active. */
export async function setupRound(rig: Rig, path: SetupRound['path'], count: number, rate: number, edgeRpcUrl: string): Promise<SetupRound> {
  const edge0 = await edgeTransactions(edgeRpcUrl);
  const hangups: Promise<number>[] = [];
  rig.driver.onActive = (call) => { hangups.push(sleep(1000).then(() => rig.driver.hangup([call.id!], 1))); };
  const calls = await placeCalls(rig, count, rate);
  await rig.driver.settle(calls, 15_000);
  rig.driver.onActive = () => undefined;
  await Promise.all(hangups);
  const ok = calls.filter((c) => !c.failure && c.activeAt !== undefined);
  const setup = ok.map((c) => c.activeAt! - c.postedAt).sort((a, b) => a - b);
  const first = Math.min(...calls.map((c) => c.postedAt));
  const last = Math.max(...ok.map((c) => c.activeAt!));
  const round: SetupRound = {
    path, placed: calls.length, failed: calls.length - ok.length, failures: failureList(calls),
    setupP50: percentile(setup, 50), setupP99: percentile(setup, 99), perSecond: ok.length / ((last - first) / 1000), edgeRequests: 0, load: load1(),
  };
  await rig.driver.hangupAll();
  rig.agent.forgetClosed();
  // After the hang-ups: an edge round's BYEs cross the edge too.
  round.edgeRequests = (await edgeTransactions(edgeRpcUrl)) - edge0;
  console.log(`setup ${path}: ${round.placed} placed, ${round.failed} failed ${round.failures.join(', ')}; POST→active p50 ${round.setupP50} ms p99 ${round.setupP99} ms; ${round.perSecond.toFixed(1)} calls/s; requests through the edge ${round.edgeRequests}; load ${round.load.toFixed(1)}`);
  return round;
}
