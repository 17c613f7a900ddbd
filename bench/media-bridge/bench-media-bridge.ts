/**
 * @module Benchmark of the latency the gateway adds in media_bridge, both ways, in one process
 * over real loopback UDP: caller RTP in → provider frame out, and provider audio in → RTP out.
 *
 * For each agent format (mulaw/8000, pcm16/16000) and each load (1 and 100 concurrent legs), the
 * same run first measures the anchor (N pairs of bare UDP sockets echoing 20 ms packets), then N
 * real AgentMediaLegs (VAD, echo guard, pacer, conversions) each with a phone sending PCMU every
 * 20 ms and an in-process agent sending 60 ms bursts of audio about five times a second.
 *
 * Run: `npm run bench:media-bridge` (`-- --write` replaces the section "media_bridge latency" of
 * docs/PERFORMANCE.md; `--quick` for a short smoke run that writes nothing).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AgentAudioFormat } from '../../src/engine/calls/ports.js';
import { PortPool } from '../../src/engine/media/index.js';
import { callerLoop, LegProbe } from './leg-probe.js';
import { bridgeMarkdown, replaceSection, type BridgeResult, type BridgeRow } from './report.js';
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

const FULL: Plan = { loads: [1, 100], rounds: 3, seconds: (legs) => (legs === 1 ? 15 : 6), warmupS: 2 };
const QUICK: Plan = { loads: [1, 10], rounds: 1, seconds: () => 4, warmupS: 1 };

/** Ports for the legs, away from the media benchmark's 20000-31999 and the tests' random ranges. */
const portPool = (): PortPool => new PortPool({ min: 34000, max: 34999 });

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs N legs for `seconds` after `warmupS`, adding their samples to `samples`; returns the process CPU in cores. */
async function measureLegs(format: AgentAudioFormat, legs: number, seconds: number, warmupS: number, loop: Buffer, samples: LegSamples): Promise<number> {
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
  const cpuBefore = process.cpuUsage();
  await sleep(warmupS * 1000);
  counting = true;
  await sleep(seconds * 1000);
  counting = false;
  const cpu = process.cpuUsage(cpuBefore);
  for (const probe of probes) probe.stop();
  return (cpu.user + cpu.system) / 1000 / ((warmupS + seconds) * 1000);
}

interface Pool {
  format: AgentAudioFormat;
  count: number;
  anchor: AnchorSamples;
  legs: LegSamples;
  cpu: number[];
}

function toRow(pool: Pool, plan: Plan): BridgeRow {
  const l = pool.legs;
  const cpu = [...pool.cpu].sort((a, b) => a - b);
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
      cpuCores: cpu[cpu.length >> 1] ?? 0,
    },
  };
}

async function run(plan: Plan): Promise<BridgeResult> {
  const loop = callerLoop();
  const pools: Pool[] = plan.loads.flatMap((count) => FORMATS.map((format) => ({ format, count, anchor: { oneWay: [], roundTrip: [] }, legs: emptyLegSamples(), cpu: [] })));
  for (let round = 1; round <= plan.rounds; round++) {
    for (const pool of pools) {
      const seconds = plan.seconds(pool.count);
      const anchor = await runUdpAnchor(pool.count, seconds + plan.warmupS, plan.warmupS);
      pool.anchor.oneWay.push(...anchor.oneWay);
      pool.anchor.roundTrip.push(...anchor.roundTrip);
      pool.cpu.push(await measureLegs(pool.format, pool.count, seconds, plan.warmupS, loop, pool.legs));
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
    const path = join(dirname(fileURLToPath(import.meta.url)), '../../docs/PERFORMANCE.md');
    const doc = existsSync(path) ? readFileSync(path, 'utf8') : '# Performance\n';
    writeFileSync(path, replaceSection(doc, section));
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
