/**
 * @module Benchmark of the latency the gateway adds in media_bridge, both ways, in one process
 * over real loopback UDP: caller RTP in → provider frame out, and provider audio in → RTP out.
 *
 * For each agent format (mulaw/8000, pcm16/16000) and each load (1, 20 and 100 concurrent legs), the
 * same run first measures the anchor (N pairs of bare UDP sockets echoing 20 ms packets), then N
 * real AgentMediaLegs (VAD, echo guard, pacer, conversions) each with a phone sending PCMU every
 * 20 ms and an in-process agent sending 60 ms bursts of audio about five times a second.
 *
 * Run: `npm run bench:media-bridge` (`-- --write` replaces the section "media_bridge latency" of
 * docs/PERFORMANCE.md; `--quick` for a short smoke run that writes nothing).
 */
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { AgentAudioFormat } from '../../src/engine/calls/ports.js';
import { PortPool } from '../../src/engine/media/index.js';
import { callerLoop, LegProbe } from './leg-probe.js';
import { writeSection } from '../performance-doc.js';
import { BRIDGE_HEADING, bridgeMarkdown, type BridgeResult, type BridgeRow } from './report.js';
import { emptyLegSamples, summarise, type AnchorSamples, type LegSamples } from './samples.js';
import { runUdpAnchor } from './udp-anchor.js';

const FORMATS: AgentAudioFormat[] = [{ encoding: 'mulaw', sampleRate: 8000 }, { encoding: 'pcm16', sampleRate: 16000 }];

interface Plan {
  loads: number[];
  /** Rounds of every (load, format) phase, interleaved so that load on the shared machine hits all alike; samples are pooled. */
  rounds: number;
  /** Seconds measured per phase, by load (more for one leg, so its p99 rests on enough samples). */
  seconds: (legs: number) => number;
  warmupS: number;
}

const FULL: Plan = { loads: [1, 20, 100], rounds: 3, seconds: (legs) => (legs === 1 ? 15 : 6), warmupS: 2 };
const QUICK: Plan = { loads: [1, 10], rounds: 1, seconds: () => 4, warmupS: 1 };

/** Ports for the legs, away from the media benchmark's 20000-31999 and the tests' random ranges. */
const portPool = (): PortPool => new PortPool({ min: 34000, max: 34999 });

/** The main thread's time waiting on a run queue, in ms (Linux; 0 elsewhere). */
function runQueueMs(): number {
  try {
    return Number(readFileSync('/proc/self/schedstat', 'utf8').split(' ')[1] ?? 0) / 1e6;
  } catch {
    return 0;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** What a leg phase used: process CPU in cores, event-loop delay and the machine's load average. */
interface PhaseLoad {
  cpuCores: number;
  /** Share of the phase the main thread spent runnable but not running (another process had the CPU). */
  waitingForCpu: number;
  loopDelayP50: number;
  loopDelayP99: number;
  loopDelayMax: number;
  loadAverage: number;
}

/** Runs N legs for `seconds` after `warmupS`, adding their samples to `samples`. */
async function measureLegs(format: AgentAudioFormat, legs: number, seconds: number, warmupS: number, loop: Buffer, samples: LegSamples): Promise<PhaseLoad> {
  const ports = portPool();
  let counting = false;
  const probes: LegProbe[] = [];
  for (let i = 0; i < legs; i++) {
    const probe = new LegProbe(format, loop, samples, () => counting);
    await probe.open(ports);
    probes.push(probe);
  }
  // Spread over one 20 ms period, as real calls are: not every leg's packet in the same instant.
  for (let i = 0; i < legs; i++) {
    probes[i]!.start();
    await sleep(20 / legs);
  }
  await sleep(warmupS * 1000);
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const cpuBefore = process.cpuUsage();
  const waitBefore = runQueueMs();
  counting = true;
  await sleep(seconds * 1000);
  counting = false;
  const cpu = process.cpuUsage(cpuBefore);
  const waited = runQueueMs() - waitBefore;
  delay.disable();
  for (const probe of probes) probe.stop();
  return {
    cpuCores: (cpu.user + cpu.system) / 1000 / (seconds * 1000),
    waitingForCpu: waited / (seconds * 1000),
    // The histogram counts from the 1 ms sampling timer's due time, in ns.
    loopDelayP50: delay.percentile(50) / 1e6,
    loopDelayP99: delay.percentile(99) / 1e6,
    loopDelayMax: delay.max / 1e6,
    loadAverage: loadavg()[0] ?? 0,
  };
}

interface Pool {
  format: AgentAudioFormat;
  count: number;
  anchor: AnchorSamples;
  legs: LegSamples;
  loads: PhaseLoad[];
}

const middle = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? 0;

function toRow(pool: Pool, plan: Plan): BridgeRow {
  const l = pool.legs;
  return {
    format: pool.format,
    count: pool.count,
    seconds: plan.seconds(pool.count) * plan.rounds,
    anchor: { oneWay: summarise(pool.anchor.oneWay), roundTrip: summarise(pool.anchor.roundTrip) },
    legs: {
      callerTotal: summarise(l.callerTotal),
      callerInLeg: summarise(l.callerInLeg),
      agentTotal: summarise(l.agentTotal),
      agentPacerSlot: summarise(l.agentPacerSlot),
      agentAdded: summarise(l.agentAdded),
    },
    load: {
      cpuCores: middle(pool.loads.map((x) => x.cpuCores)),
      waitingForCpu: middle(pool.loads.map((x) => x.waitingForCpu)),
      loopDelayP50: middle(pool.loads.map((x) => x.loopDelayP50)),
      loopDelayP99: middle(pool.loads.map((x) => x.loopDelayP99)),
      loopDelayMax: middle(pool.loads.map((x) => x.loopDelayMax)),
      loadAverage: middle(pool.loads.map((x) => x.loadAverage)),
    },
  };
}

async function run(plan: Plan): Promise<BridgeResult> {
  const loop = callerLoop();
  const pools: Pool[] = plan.loads.flatMap((count) => FORMATS.map((format) => ({ format, count, anchor: { oneWay: [], roundTrip: [] }, legs: emptyLegSamples(), loads: [] })));
  for (let round = 1; round <= plan.rounds; round++) {
    for (const pool of pools) {
      const seconds = plan.seconds(pool.count);
      const anchor = await runUdpAnchor(pool.count, seconds + plan.warmupS, plan.warmupS);
      pool.anchor.oneWay.push(...anchor.oneWay);
      pool.anchor.roundTrip.push(...anchor.roundTrip);
      pool.loads.push(await measureLegs(pool.format, pool.count, seconds, plan.warmupS, loop, pool.legs));
      process.stderr.write(`round ${round}: ${pool.format.encoding}/${pool.format.sampleRate} x${pool.count} done\n`);
    }
  }
  const rows = pools.map((pool) => toRow(pool, plan));
  return {
    date: new Date().toISOString(),
    rounds: plan.rounds,
    machine: { nproc: availableParallelism(), cpuModel: cpus()[0]?.model.trim() ?? 'unknown', node: process.version, loadAverage: loadavg()[0] ?? 0 },
    rows,
  };
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const result = await run(quick ? QUICK : FULL);
  const section = bridgeMarkdown(result);
  process.stdout.write(`${section}\n`);
  if (process.argv.includes('--write') && !quick) {
    writeSection(BRIDGE_HEADING, section);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
