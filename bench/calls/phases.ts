/**
 * @module The calls benchmark's phases: the concurrency ramp (media calls with agents held
 * through a measuring window per step), the setup-rate sweep, and the list API under load with
 * 1,000 live calls.
 */
import { runApiLoad, runPacedLoad, percentile, type ApiLoadResult, type PacedLoadResult } from './api-load.js';
import type { CallDriver, PlacedCall } from './call-driver.js';
import {
  audioWindow, cpuMeter, gatewayMetrics, load1, rssMedian, sleep, udpReceiveBufferErrors, type AudioWindow, type CpuUse, type Watched, serverSideWindow, stealWindow, type ServerSide,
} from './measure.js';
import type { GatewayProcess, LoadAgent } from './processes.js';
import type { SchedulingPriority } from './priority.js';

export interface BenchContext {
  gw: GatewayProcess;
  agent: LoadAgent;
  driver: CallDriver;
  echoCarriers: readonly string[];
  ringCarrier: string;
  watched: Watched;
  idleRssKiB: number;
  /** Every call's agent must get back at least this share of its own frames for a step to pass. */
  threshold: number;
}

/** Places `count` calls spread over the echo carriers at `rate` per second in all. */
export async function placeMedia(ctx: BenchContext, count: number, rate: number): Promise<PlacedCall[]> {
  const k = ctx.echoCarriers.length;
  const parts = ctx.echoCarriers.map((carrier, i) => ctx.driver.place(carrier, Math.floor(count / k) + (i < count % k ? 1 : 0), rate / k));
  return (await Promise.all(parts)).flat();
}

/** Waits until the load agent has a `start` from every call in `ids` (the agent leg is up). */
export async function agentsUp(ctx: BenchContext, ids: readonly string[], timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const started = new Set((await ctx.agent.snapshot()).filter((c) => !c.closed).map((c) => c.callId));
    const missing = ids.filter((id) => !started.has(id)).length;
    if (missing === 0 || Date.now() > deadline) return missing;
    await sleep(250);
  }
}

export interface RampStep {
  target: number;
  /** Calls live with media and an agent during the window. */
  live: number;
  failedSetups: number;
  failures: string[];
  audio: AudioWindow;
  cpu: CpuUse;
  rssKiB: number;
  perCallKiB: number;
  /** The gateway's event-loop delay over the window (p99 and max, ms). */
  lagP99Ms: number;
  lagMaxMs: number;
  /** UDP datagrams the host dropped for full receive buffers during the window (all processes). */
  udpDrops: number;
  load: number;
  passed: boolean;
}

function failureList(calls: readonly PlacedCall[]): string[] {
  const counts = new Map<string, number>();
  for (const c of calls) if (c.failure) counts.set(c.failure, (counts.get(c.failure) ?? 0) + 1);
  return [...counts].map(([reason, n]) => `${n} × ${reason}`);
}

/** Adds calls up to each target in turn; stops after the first step that loses audio or calls. */
export async function ramp(ctx: BenchContext, targets: readonly number[], rate: number, windowMs: number, budgetMs: number): Promise<RampStep[]> {
  const steps: RampStep[] = [];
  const live: PlacedCall[] = [];
  const t0 = Date.now();
  for (const target of targets) {
    if (Date.now() - t0 > budgetMs) break;
    const placed = await placeMedia(ctx, target - live.length, rate);
    await ctx.driver.settle(placed, 20_000);
    live.push(...placed.filter((c) => !c.failure && c.id));
    const missing = await agentsUp(ctx, live.map((c) => c.id!), 10_000);
    await sleep(3000);
    await gatewayMetrics(ctx.gw.base);
    const drops0 = udpReceiveBufferErrors();
    const cpu = cpuMeter(ctx.watched);
    const rss = rssMedian(ctx.gw.pid, Math.max(2, Math.floor(windowMs / 1000)), 1000);
    const audio = await audioWindow(ctx.agent, new Set(live.map((c) => c.id!)), windowMs, ctx.threshold);
    const used = cpu();
    const udpDrops = udpReceiveBufferErrors() - drops0;
    const lag = await gatewayMetrics(ctx.gw.base);
    const rssKiB = await rss;
    const failed = placed.filter((c) => c.failure).length + missing;
    const step: RampStep = {
      target, live: audio.calls, failedSetups: failed, failures: failureList(placed), audio, cpu: used, rssKiB,
      perCallKiB: (rssKiB - ctx.idleRssKiB) / Math.max(1, audio.calls), lagP99Ms: lag.lagP99Ms, lagMaxMs: lag.lagMaxMs, udpDrops, load: load1(),
      passed: failed === 0 && audio.dropped === 0 && audio.below === 0 && audio.calls === target,
    };
    steps.push(step);
    console.log(`ramp ${target}: live ${audio.calls}, failed ${failed}, echoed min ${(audio.echoedMin * 100).toFixed(1)} % total ${(audio.echoedTotal * 100).toFixed(1)} %, received ${(audio.receivedTotal * 100).toFixed(1)} %, lag p99 ${step.lagP99Ms.toFixed(0)} ms max ${step.lagMaxMs.toFixed(0)} ms, udp drops ${udpDrops}, below ${audio.below}, dropped ${audio.dropped}, agent sent ${(audio.sentTotal * 100).toFixed(1)} %, gateway ${step.cpu.gateway.toFixed(2)} cores (waited for a CPU ${(step.cpu.gatewayRunQueueWait * 100).toFixed(0)} % of the window), agent ${step.cpu.agent.toFixed(2)}, sipp ${step.cpu.sipps.toFixed(2)}, rss ${(rssKiB / 1024).toFixed(0)} MiB (${step.perCallKiB.toFixed(0)} KiB/call), load ${step.load.toFixed(1)}`);
    if (!step.passed) break;
  }
  return steps;
}

export interface RateStep {
  rate: number;
  placed: number;
  failed: number;
  failures: string[];
  setupP50: number;
  setupP99: number;
  agentP50: number;
  agentP99: number;
  gatewayCores: number;
  load: number;
}

/** Calls at a fixed rate for `seconds`, each hung up `holdMs` after it is seen active. */
export async function setupRate(ctx: BenchContext, rate: number, seconds: number, holdMs: number): Promise<RateStep> {
  const hangups: Promise<number>[] = [];
  ctx.driver.onActive = (call) => {
    hangups.push(sleep(holdMs).then(() => ctx.driver.hangup([call.id!], 1)));
  };
  const cpu = cpuMeter(ctx.watched);
  const calls = await placeMedia(ctx, rate * seconds, rate);
  await ctx.driver.settle(calls, 15_000);
  const gatewayCores = cpu().gateway;
  ctx.driver.onActive = () => undefined;
  await Promise.all(hangups);
  const started = new Map((await ctx.agent.snapshot()).map((c) => [c.callId, c.startedAt]));
  const ok = calls.filter((c) => !c.failure && c.activeAt !== undefined);
  const setup = ok.map((c) => c.activeAt! - c.postedAt).sort((a, b) => a - b);
  const agent = ok.filter((c) => started.has(c.id!)).map((c) => started.get(c.id!)! - c.postedAt).sort((a, b) => a - b);
  const step: RateStep = {
    rate, placed: calls.length, failed: calls.length - ok.length, failures: failureList(calls),
    setupP50: percentile(setup, 50), setupP99: percentile(setup, 99), agentP50: percentile(agent, 50), agentP99: percentile(agent, 99),
    gatewayCores, load: load1(),
  };
  console.log(`rate ${rate}/s: ${step.placed} placed, ${step.failed} failed ${step.failures.join(', ')}; POST→active p50 ${step.setupP50} ms p99 ${step.setupP99} ms; POST→agent start p50 ${step.agentP50} p99 ${step.agentP99}; gateway ${gatewayCores.toFixed(2)} cores`);
  await ctx.driver.hangupAll();
  ctx.agent.forgetClosed();
  return step;
}

export interface ApiUnderLoad {
  label: string;
  path: string;
  ringing: number;
  media: number;
  /** The figure judged: an even rate from a client process of its own. */
  paced: PacedLoadResult;
  /** The paced run as the process answering saw it. */
  serverSide: ServerSide;
  /** Share of the host's CPU time the hypervisor took over the paced run. */
  hostSteal: number;
  /** autocannon at the same `overallRate`, right after, for reference (see {@link runPacedLoad}). */
  autocannon: ApiLoadResult;
  /** Gateway figures over the paced run. */
  gatewayCores: number;
  /** Share of the run the gateway's main thread waited for a CPU. */
  gatewayWait: number;
  rssKiB: number;
  audio: AudioWindow | null;
  load: number;
}

/**
 * One API measurement: `path` at `rate` for `seconds` from the paced client (with the gateway's
 * CPU and, when `withAudio` names calls, their agents' audio over it), then autocannon.
 */
export async function apiRun(ctx: BenchContext, label: string, path: string, o: { key?: string; rate: number; seconds: number; ringing: number; withAudio: ReadonlySet<string> | null; clientPriority?: SchedulingPriority }): Promise<ApiUnderLoad> {
  const cpu = cpuMeter(ctx.watched);
  const rss = rssMedian(ctx.gw.pid, 5, 1000);
  const request = { base: ctx.gw.base, path, rate: o.rate, seconds: o.seconds, ...(o.key ? { key: o.key } : {}) };
  const paceRequest = { ...request, ...(o.clientPriority !== undefined ? { priority: o.clientPriority } : {}) };
  const server = await serverSideWindow(ctx.gw.pid, ctx.gw.base, new URL(path, ctx.gw.base).pathname);
  const steal = stealWindow();
  let paced: PacedLoadResult | undefined;
  const audio = o.withAudio ? await audioWindow(ctx.agent, o.withAudio, 0, ctx.threshold, async () => { paced = await runPacedLoad(paceRequest); }) : null;
  paced ??= await runPacedLoad(paceRequest);
  const hostSteal = steal();
  const serverSide = await server();
  const used = cpu();
  const rssKiB = await rss;
  const autocannon = await runApiLoad({ ...request, label, connections: 50 });
  const entry: ApiUnderLoad = { label, path, ringing: o.ringing, media: o.withAudio?.size ?? 0, paced, serverSide, hostSteal, autocannon, gatewayCores: used.gateway, gatewayWait: used.gatewayRunQueueWait, rssKiB, audio, load: load1() };
  console.log(`API ${label}: paced ${paced.requests} requests (${paced.sentRate.toFixed(0)}/s), non-2xx ${paced.non2xx}, errors ${paced.errors}, p50 ${paced.p50.toFixed(2)} ms, p99 ${paced.p99.toFixed(2)} ms (client late p99 ${paced.generatorLateP99.toFixed(2)} ms; in the process ${(serverSide.over10ms * 100).toFixed(2)} % over 10 ms, GC ${serverSide.gcMs.toFixed(0)} ms, loop lag p99 ${serverSide.lagP99Ms.toFixed(1)} ms, max ${serverSide.lagMaxMs.toFixed(1)} ms, ${serverSide.cores.toFixed(2)} cores, waited for one ${(serverSide.runQueueWait * 100).toFixed(1)} % of the time; host steal ${(hostSteal * 100).toFixed(1)} %); autocannon p50 ${autocannon.p50.toFixed(2)} ms, p99 ${autocannon.p99.toFixed(2)} ms; gateway ${entry.gatewayCores.toFixed(2)} cores, rss ${(rssKiB / 1024).toFixed(0)} MiB`);
  return entry;
}

async function waitLive(ctx: BenchContext, n: number, timeoutMs: number): Promise<{ ringing: number; active: number }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const live = await ctx.driver.live();
    const ringing = live.filter((c) => c.state === 'ringing').length;
    const active = live.filter((c) => c.state === 'active').length;
    if (ringing + active >= n || Date.now() > deadline) return { ringing, active };
    await sleep(500);
  }
}

/** GET /v1/calls?limit=50 at `apiRate` with `total` live calls: first all ringing, then `media` of them answered with agents. */
export async function apiWithLiveCalls(ctx: BenchContext, total: number, media: number, apiRate: number, seconds: number): Promise<ApiUnderLoad[]> {
  const out: ApiUnderLoad[] = [];
  const measure = async (label: string, ringing: number, withAudio: ReadonlySet<string> | null): Promise<void> => {
    await sleep(2000);
    out.push(await apiRun(ctx, label, '/v1/calls?limit=50', { key: ctx.gw.apiKey, rate: apiRate, seconds, ringing, withAudio }));
  };
  const placedRinging = await Promise.all(await placeRinging(ctx, total, 100));
  const state = await waitLive(ctx, total, 60_000);
  await measure(`${state.ringing} ringing`, state.ringing, null);
  if (media > 0) {
    const drop = placedRinging.filter((c) => c.id).slice(-media).map((c) => c.id!);
    await ctx.driver.hangup(drop);
    const answered = await placeMedia(ctx, media, 25);
    await ctx.driver.settle(answered, 20_000);
    const ok = answered.filter((c) => !c.failure && c.id).map((c) => c.id!);
    await agentsUp(ctx, ok, 10_000);
    const mixed = await waitLive(ctx, total, 10_000);
    await measure(`${mixed.ringing} ringing + ${mixed.active} active with agents`, mixed.ringing, new Set(ok));
  }
  await ctx.driver.hangupAll(120_000);
  ctx.agent.forgetClosed();
  return out;
}

/** Ringing calls at `rate` per second (not tracked for `active`: they never get there). */
async function placeRinging(ctx: BenchContext, count: number, rate: number): Promise<Promise<PlacedCall>[]> {
  const posts: Promise<PlacedCall>[] = [];
  const t0 = performance.now();
  for (let i = 0; i < count; i += 1) {
    const wait = t0 + (i * 1000) / rate - performance.now();
    if (wait > 0) await sleep(wait);
    posts.push(ctx.driver.placeOne(ctx.ringCarrier, false));
  }
  return posts;
}
