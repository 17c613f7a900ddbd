/** @module Writes the "Cluster: two engines behind the edge" section of docs/PERFORMANCE.md from a run. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { median } from '../calls/measure.js';
import { writeSection } from '../performance-doc.js';
import type { CapacityStep, SetupRound } from './phases.js';

export const HEADING = '## Cluster: two engines behind the edge (`npm run bench:cluster`)';
/** Reading of the committed run, written by hand after it (it names the run it is about). */
const ANALYSIS = join(import.meta.dirname, 'analysis.md');

export interface ClusterReport {
  machine: { nproc: number; cpu: string; node: string; startedAt: Date | string; loadAtStart: number; loadAtEnd: number };
  threshold: number;
  windowS: number;
  rampRate: number;
  echoSipps: number;
  setupCalls: number;
  setupRate: number;
  one: CapacityStep[];
  two: CapacityStep[];
  rounds: SetupRound[];
}

const pct = (v: number): string => `${(v * 100).toFixed(1)} %`;

/** The most calls a ramp held (the last step that passed), or 0. */
export const held = (steps: readonly CapacityStep[]): number => [...steps].reverse().find((s) => s.passed)?.target ?? 0;

function rampTable(label: string, steps: readonly CapacityStep[]): string[] {
  const names = Object.keys(steps[0]?.cpu ?? {});
  return [
    `| ${label}: calls | failed setups | calls ended | agent frames back, lowest call | calls under ${pct(0.95)} | host UDP drops | ${names.map((n) => `${n} cores`).join(' | ')} | load avg |`,
    `|---|---|---|---|---|---|${names.map(() => '---|').join('')}---|`,
    ...steps.map((s) => `| ${s.target}${s.live !== s.target ? ` (${s.live} live)` : ''} | ${s.failedSetups}${s.failures.length ? ` (${s.failures.join('; ')})` : ''} | ${s.audio.dropped} | ${pct(s.audio.echoedMin)} | ${s.audio.below} | ${s.udpDrops} | ${names.map((n) => (s.cpu[n]! / s.windowS).toFixed(2)).join(' | ')} | ${s.load.toFixed(1)} |`),
  ];
}

/** CPU seconds per part over the last step that passed, as shares of the total. */
function cpuShares(steps: readonly CapacityStep[]): string {
  const step = [...steps].reverse().find((s) => s.passed);
  if (!step) return 'no step passed';
  const total = Object.values(step.cpu).reduce((a, b) => a + b, 0);
  return `${(total / step.windowS).toFixed(2)} cores in all at ${step.target} calls: ${Object.entries(step.cpu).map(([n, s]) => `${n} ${((s / total) * 100).toFixed(0)} %`).join(', ')}`;
}

export function clusterSection(r: ClusterReport): string {
  const m = r.machine;
  const one = held(r.one);
  const two = held(r.two);
  const edge = r.rounds.filter((x) => x.path === 'edge');
  const direct = r.rounds.filter((x) => x.path === 'direct');
  const p50 = (rs: readonly SetupRound[]): number => median(rs.map((x) => x.setupP50));
  const rate = (rs: readonly SetupRound[]): number => median(rs.map((x) => x.perSecond));
  const analysis = existsSync(ANALYSIS) ? readFileSync(ANALYSIS, 'utf8').trim() : '';
  return [
    HEADING,
    '',
    `Run ${new Date(m.startedAt).toISOString()} on ${m.nproc} × ${m.cpu}, Node ${m.node}; load average ${m.loadAtStart.toFixed(1)} at the start, ${m.loadAtEnd.toFixed(1)} at the end (the machine was shared with other work).`,
    `Everything on this one machine on loopback: PostgreSQL, Redis, the Kamailio edge, engines on 127.0.0.2 and 127.0.0.3 (each \`sip.outbound_proxy\` at the edge), one API process, ${r.echoSipps} sipp far ends echoing RTP, and the load agent (20 ms frames both ways on every call's agent socket).`,
    `Calls are placed with \`POST /v1/calls\` on the API process, which puts each on the engine with the most free capacity (docs/CLUSTER.md "Live state in Redis"); the engine's INVITE goes through the edge. A step passes when every call is up and every call's agent gets back at least ${pct(r.threshold)} of its own frames over a ${r.windowS} s window; steps add calls at ${r.rampRate}/s.`,
    '',
    '### Capacity: one engine, then two',
    '',
    `| | most calls held without loss |`,
    '|---|---|',
    `| one engine | ${one} |`,
    `| two engines | ${two} |`,
    `| ratio two / one | ${one > 0 ? (two / one).toFixed(2) : '-'} × (target 1.8× on machines with a core per engine and more for the rest) |`,
    '',
    ...rampTable('one engine', r.one),
    '',
    ...rampTable('two engines', r.two),
    '',
    `Where the CPU went (CPU seconds over the window of the last step held, each part's whole process group): one engine, ${cpuShares(r.one)}; two engines, ${cpuShares(r.two)}.`,
    '',
    '### Edge cost: call setup through the edge against straight to the far end',
    '',
    `Engine A alone, restarted with and without \`sip.outbound_proxy\` (same node id, addresses, ports and config otherwise), rounds in the order edge, direct, direct, edge…; each round offers ${r.setupCalls} calls at ${r.setupRate}/s, each hung up 1 s after it is listed active; an untimed round of the same size warms each restart up first. Setup is from the POST to the call listed \`active\` by the API process (polled every 20 ms).`,
    '',
    '| round | path | failed | POST → active p50 / p99 | calls set up per second | requests handled by the edge | load avg |',
    '|---|---|---|---|---|---|---|',
    ...r.rounds.map((x, i) => `| ${i + 1} | ${x.path} | ${x.failed}${x.failures.length ? ` (${x.failures.join('; ')})` : ''} | ${x.setupP50} / ${x.setupP99} ms | ${x.perSecond.toFixed(1)} | ${x.edgeRequests} | ${x.load.toFixed(1)} |`),
    '',
    `| | median of the rounds' p50 setup | median calls/s |`,
    '|---|---|---|',
    `| through the edge | ${p50(edge)} ms | ${rate(edge).toFixed(1)} |`,
    `| straight | ${p50(direct)} ms | ${rate(direct).toFixed(1)} |`,
    `| ratio edge / straight | ${(p50(edge) / p50(direct)).toFixed(2)} × | ${(rate(edge) / rate(direct)).toFixed(2)} × |`,
    ...(analysis ? ['', analysis] : []),
  ].join('\n');
}

export function writeClusterSection(r: ClusterReport): void {
  writeSection(HEADING, clusterSection(r));
}
