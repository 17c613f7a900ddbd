/** @module Writes the "Calls" section of docs/PERFORMANCE.md from a benchmark run, leaving other sections alone. */
import { writeSection } from '../performance-doc.js';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { POLL_MS } from './call-driver.js';
import type { MemoryByAge } from './memory-age.js';
import type { ApiUnderLoad, RampStep, RateStep } from './phases.js';

export const HEADING = '## Calls (`npm run bench:calls`)';
/** Reading of the committed run, written by hand after it (it names the run it is about). */
const ANALYSIS = join(import.meta.dirname, 'analysis.md');

export interface CallsReport {
  machine: { nproc: number; cpu: string; node: string; startedAt: Date; loadAtStart: number; loadAtEnd: number };
  gateway: string;
  echoSipps: number;
  threshold: number;
  windowS: number;
  rampRate: number;
  setupSeconds: number;
  holdMs: number;
  apiRate: number;
  apiSeconds: number;
  idleRssKiB: number;
  idleCores: number;
  anchor: ApiUnderLoad;
  listIdle: ApiUnderLoad;
  steps: RampStep[];
  memory: MemoryByAge;
  rates: RateStep[];
  /** Hang-up requests the gateway never answered (see the analysis). */
  unansweredHangups: number;
  api: ApiUnderLoad[];
}

const pct = (v: number): string => `${(v * 100).toFixed(1)} %`;
const ms = (v: number): string => (Number.isFinite(v) ? v.toFixed(v < 10 ? 2 : 0) : '-');
const verdict = (met: boolean): string => (met ? '**met**' : '**not met**');

/** The best step that passed, and the first that did not. */
export function heldStep(r: CallsReport): { held: RampStep | undefined; failed: RampStep | undefined } {
  return { held: [...r.steps].reverse().find((s) => s.passed), failed: r.steps.find((s) => !s.passed) };
}

/** CPU ms the gateway spends per second of one call. */
const cpuPerCallSecond = (s: RampStep): number => (s.cpu.gateway * 1000) / Math.max(1, s.live);

function rampTable(r: CallsReport): string[] {
  return [
    '| calls | failed setups | calls ended | agent frames back: lowest call / 1st pct / median | all calls | calls under 95 % | all frames to agents | load agent sent | gateway cores | CPU ms per call-second | gateway main thread waiting for a CPU | gateway event-loop delay p99 / max | load agent cores | sipp cores | host UDP receive-buffer drops | gateway RSS | RSS per call | load avg |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...r.steps.map((s) => `| ${s.target}${s.live !== s.target ? ` (${s.live} live)` : ''} | ${s.failedSetups}${s.failures.length ? ` (${s.failures.join('; ')})` : ''} | ${s.audio.dropped} | ${pct(s.audio.echoedMin)} / ${pct(s.audio.echoedP1)} / ${pct(s.audio.echoedMedian)} | ${pct(s.audio.echoedTotal)} | ${s.audio.below} | ${pct(s.audio.receivedTotal)} | ${pct(s.audio.sentTotal)} | ${s.cpu.gateway.toFixed(2)} | ${cpuPerCallSecond(s).toFixed(1)} | ${pct(s.cpu.gatewayRunQueueWait)} | ${s.lagP99Ms.toFixed(0)} / ${s.lagMaxMs.toFixed(0)} ms | ${s.cpu.agent.toFixed(2)} | ${s.cpu.sipps.toFixed(2)} | ${s.udpDrops} | ${(s.rssKiB / 1024).toFixed(0)} MiB | ${s.perCallKiB.toFixed(0)} KiB | ${s.load.toFixed(1)} |`),
  ];
}

function memoryTable(r: CallsReport): string[] {
  const m = r.memory;
  return [
    `${m.calls} media calls with agents held past a minute${m.failed ? ` (${m.failed} failed to set up)` : ''}; idle: RSS ${(m.idle.rssKiB / 1024).toFixed(1)} MiB, V8 heap used ${(m.idle.heapUsedKiB / 1024).toFixed(1)} MiB, external ${(m.idle.externalKiB / 1024).toFixed(1)} MiB (from the gateway's \`/metrics\`).`,
    '',
    '| call age | gateway RSS | RSS per call | V8 heap used | external (ArrayBuffers, Buffers) | external per call |',
    '|---|---|---|---|---|---|',
    ...m.samples.map((x) => `| ${x.ageS} s | ${(x.rssKiB / 1024).toFixed(0)} MiB | ${x.perCallKiB.toFixed(0)} KiB | ${(x.heapUsedKiB / 1024).toFixed(1)} MiB | ${(x.externalKiB / 1024).toFixed(1)} MiB | ${((x.externalKiB - m.idle.externalKiB) / Math.max(1, m.calls)).toFixed(0)} KiB |`),
  ];
}

function rateTable(r: CallsReport): string[] {
  return [
    '| calls/s | calls | failed | POST→active p50 | p99 | POST→agent `start` p50 | p99 | gateway cores | load avg |',
    '|---|---|---|---|---|---|---|---|---|',
    ...r.rates.map((s) => `| ${s.rate} | ${s.placed} | ${s.failed}${s.failures.length ? ` (${s.failures.join('; ')})` : ''} | ${ms(s.setupP50)} ms | ${ms(s.setupP99)} ms | ${ms(s.agentP50)} ms | ${ms(s.agentP99)} ms | ${s.gatewayCores.toFixed(2)} | ${s.load.toFixed(1)} |`),
  ];
}

function apiRow(a: ApiUnderLoad, anchorP99: number, live: string): string {
  const x = a.paced;
  const cpuPerRequest = (a.gatewayCores * 1000) / Math.max(1, x.sentRate);
  const audio = a.audio ? `; their agents got ${pct(a.audio.echoedTotal)} of their frames back (lowest call ${pct(a.audio.echoedMin)})` : '';
  return `| \`${a.path}\` | ${live}${audio} | ${x.sentRate.toFixed(0)} | ${x.non2xx + x.errors} | ${ms(x.p50)} | ${ms(x.p90)} | ${ms(x.p99)} | ${ms(x.max)} | ${ms(x.generatorLateP99)} | ${(x.p99 / anchorP99).toFixed(1)} | ${ms(a.autocannon.p50)} / ${ms(a.autocannon.p99)} | ${a.gatewayCores.toFixed(2)} | ${cpuPerRequest.toFixed(2)} | ${pct(a.gatewayWait)} | ${a.load.toFixed(1)} |`;
}

function apiTable(r: CallsReport): string[] {
  const anchor = r.anchor.paced.p99;
  return [
    '| request | live calls | sent/s | errors | p50 ms | p90 ms | p99 ms | max ms | client late p99 ms | p99 / anchor p99 | autocannon p50 / p99 ms | gateway cores | gateway CPU ms per request | gateway main thread waiting for a CPU | load avg |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    apiRow(r.anchor, anchor, 'none (anchor)'),
    apiRow(r.listIdle, anchor, 'none'),
    ...r.api.map((a) => apiRow(a, anchor, a.media > 0 ? `${a.ringing} ringing + ${a.media} answered, media and agents` : `${a.ringing} ringing (no media)`)),
  ];
}

function targets(r: CallsReport): string[] {
  const { held, failed } = heldStep(r);
  const passingRates = r.rates.filter((s) => s.failed === 0);
  const bestRate = passingRates.at(-1);
  const thousand = r.api[0];
  const oldest = r.memory.samples.at(-1);
  const perCall = oldest?.perCallKiB ?? NaN;
  return [
    '| measure | this run | target | verdict |',
    '|---|---|---|---|',
    `| most concurrent agent calls held with no audio loss | ${held ? held.live : 'none'}${failed ? ` (the ${failed.target} step failed)` : ''} | ≥ 300 | ${verdict((held?.live ?? 0) >= 300)} |`,
    `| call setups per second with no failure | ${bestRate ? `${bestRate.rate}/s (POST→active p50 ${ms(bestRate.setupP50)} ms, p99 ${ms(bestRate.setupP99)} ms)` : 'none'} | ≥ 50/s | ${verdict((bestRate?.rate ?? 0) >= 50)} |`,
    `| \`GET /v1/calls?limit=50\` p99 at ${r.apiRate} req/s with ${thousand ? thousand.ringing + thousand.media : 0} live calls | ${thousand ? `${ms(thousand.paced.p99)} ms at an even rate (anchor \`GET /healthz\` idle: ${ms(r.anchor.paced.p99)} ms; autocannon: ${ms(thousand.autocannon.p99)} ms)` : 'not run'} | < 10 ms | ${verdict(thousand !== undefined && thousand.paced.p99 < 10)} |`,
    `| memory per media call (gateway RSS growth / calls) | ${oldest ? `${perCall.toFixed(0)} KiB with ${r.memory.calls} calls ${oldest.ageS} s old (${r.memory.samples.map((x) => `${x.perCallKiB.toFixed(0)} KiB at ${x.ageS} s`).join(', ')})` : '-'} | < 300 KB | ${verdict(perCall * 1024 < 300_000)} |`,
    `| gateway CPU per media call | ${held ? `${cpuPerCallSecond(held).toFixed(1)} ms per call-second (${((held.cpu.gateway / held.live) * 100).toFixed(2)} % of a core) at ${held.live} calls` : '-'} | (none) | |`,
  ];
}

function method(r: CallsReport): string[] {
  return [
    `- The gateway (${r.gateway}) runs alone in its own Node process from the compiled build (\`node dist/main.js\`, as \`npm start\`; log level warn) with a fresh data folder, a tenant and live key made with \`vgw tenant create\`, and a carriers file naming ${r.echoSipps} sipp 3.6.1 UAS far ends (\`-sn uas -rtp_echo\`: answer at once with PCMU, echo every RTP packet) and one sipp UAS that answers 180 and rings until cancelled. Calls go round-robin over the echo carriers so no single sipp carries them all. Configuration changes from the defaults, all for the load: \`http.rate_limit_per_second\` and \`rate_limit_burst\` 1,000,000 (one key drives the API load), \`calls.max_concurrent_per_tenant\` 10,000, \`calls.allow_private_agent_urls\` true (the agent is on loopback), \`calls.ring_timeout_seconds\` 600, RTP ports 20000-29999.`,
    '- The load agent is another Node process: a `ws` server speaking the agent protocol (docs/API.md "Agent WebSocket protocol") that accepts permessage-deflate, as common agent servers do (the gateway offers none; see below). From each call\'s `start` it sends one 20 ms µ-law frame (160 bytes of 0x55, not silence) every 20 ms, paced on elapsed time; it counts every `media` message from the gateway and, apart, those carrying its own frame back. The gateway plays agent audio to the carrier and fills gaps with silence, so "frames back" counts agent audio that made the whole round trip (agent → gateway → RTP → sipp echo → gateway → agent); expected is 50 per call per second.',
    `- Concurrency ramp: calls are added at ${r.rampRate}/s up to each step, kept up, and after 3 s of settling each step is measured over ${r.windowS} s. A step passes when every call was set up, none ended, and every call's agent got back at least ${pct(r.threshold)} of its expected frames. The ramp stops at the first failing step. RSS is the median of VmRSS samples (/proc/PID/status) during the window; "RSS per call" there = (RSS − RSS before the ramp, ${(r.idleRssKiB / 1024).toFixed(1)} MiB) / calls, which understates, since memory freed by the calls of the memory phase is reused first; the memory table below is the figure to use. CPU is utime + stime from /proc/PID/stat over the window, per process.`,
    `- Setup rate: calls at a fixed rate for ${r.setupSeconds} s (open loop), each hung up ${r.holdMs / 1000} s after it is seen \`active\`; the sweep stops at the first rate with a failed call (refused POST, call ended before \`active\`, or not active within 15 s). Setup time is from just before the POST to the first \`GET /v1/calls?state=active\` poll answer listing the call; the benchmark polls every ${POLL_MS} ms while calls are pending, so it over-states setup by up to ${POLL_MS} ms plus one list request. POST→agent \`start\` is when the load agent received the gateway's \`start\` (same machine clock).`,
    `- Memory (measured before the ramp, after a 20-call warm-up): ${r.memory.calls} media calls with agents are placed and held; RSS and the V8 heap and external memory (from the gateway's \`/metrics\`) are sampled as the calls age. Per call = (RSS − RSS before these calls) / calls.`,
    `- API: ${r.apiRate} requests a second, evenly spaced, for ${r.apiSeconds} s, from a Node client process of its own (\`bench/calls/paced-client.ts\`: keep-alive connections from a pool that grows while answers are outstanding). Each request is timed from when it was due, not from when it left, so a late client or a queue for a connection counts against the gateway (no coordinated omission); "client late p99" shows how late the client itself sent. The anchor is \`GET /healthz\` with no calls, in the same run. Right after each run, autocannon (50 connections, \`overallRate\` ${r.apiRate}/s, same length; percentiles from every response's own time) measures the same request, for reference only: its \`overallRate\` lets each connection send back to back until it has used its quota for the second, then wait for the next second (autocannon's \`lib/httpClient.js\`, \`reqsMadeThisSecond\`), so a second's requests arrive at once, 50 at a time, and its figure is the queue of that burst rather than the latency at an even rate. 1,000 live calls are first 1,000 ringing calls (the ringing sipp: a live call with a SIP transaction, an RTP port pair and a call record, but no media and no agent), then the same with some replaced by answered calls with media and agents.`,
  ];
}

/** Replaces (or appends) the Calls section of docs/PERFORMANCE.md. */
export function writeCallsSection(r: CallsReport): void {
  const m = r.machine;
  const section = [
    HEADING,
    '',
    `Measured ${m.startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC on ${m.nproc} cores (nproc), ${m.cpu}, Node ${m.node}; 1-minute load average ${m.loadAtStart.toFixed(1)} at the start and ${m.loadAtEnd.toFixed(1)} at the end: the machine is shared with other work, and the gateway, the load agent, sipp and the API clients all run on the same 2 cores.`,
    '',
    ...targets(r),
    '',
    '### Method',
    '',
    ...method(r),
    '',
    '### Concurrent calls with agents',
    '',
    ...rampTable(r),
    '',
    '### Memory per call as calls age',
    '',
    ...memoryTable(r),
    '',
    '### Setup rate',
    '',
    ...rateTable(r),
    '',
    '### `GET /v1/calls` under load',
    '',
    ...apiTable(r),
    '',
    ...(r.unansweredHangups > 0 ? [`${r.unansweredHangups} hang-up requests got no answer within 20 s in this run (see the last point below).`, ''] : []),
    ...(existsSync(ANALYSIS) ? ['### Reading the figures', '', readFileSync(ANALYSIS, 'utf8').trim(), ''] : []),
    'Run: `npm run bench:calls -- --write` (add `--gateway-rev HEAD` to measure a commit while the working tree changes).',
    '',
  ].join('\n');
  writeSection(HEADING, section);
}
