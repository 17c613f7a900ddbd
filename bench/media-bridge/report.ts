/** @module The docs/PERFORMANCE.md section of the media_bridge latency benchmark. */
import type { AgentAudioFormat } from '../../src/engine/calls/ports.js';
import type { Summary } from './samples.js';

/** One agent format at one load. */
export interface BridgeRow {
  format: AgentAudioFormat;
  count: number;
  seconds: number;
  anchor: { oneWay: Summary; roundTrip: Summary };
  legs: {
    callerTotal: Summary;
    callerInLeg: Summary;
    agentTotal: Summary;
    agentPacerSlot: Summary;
    agentAdded: Summary;
  };
  /** Medians over the rounds of the leg phases: process CPU in cores (legs, phones and agents), event-loop delay in ms, 1-minute load average. */
  load: { cpuCores: number; waitingForCpu: number; loopDelayP50: number; loopDelayP99: number; loopDelayMax: number; loadAverage: number };
}

export interface BridgeResult {
  date: string;
  /** Interleaved rounds of every phase; samples are pooled over them. */
  rounds: number;
  machine: { nproc: number; cpuModel: string; node: string; loadAverage: number };
  rows: BridgeRow[];
}

export const BRIDGE_HEADING = '## media_bridge latency (`npm run bench:media-bridge`)';

/** Targets of the issue: what the gateway adds, p50 under 5 ms and p99 under 20 ms. */
const TARGET_P50_MS = 5;
const TARGET_P99_MS = 20;

const ms = (x: number): string => (Number.isNaN(x) ? '-' : x.toFixed(2));
const pair = (s: Summary): string => `${ms(s.p50)} / ${ms(s.p99)}`;
const ratio = (a: number, b: number): string => (b > 0 ? `${(a / b).toFixed(1)}×` : '-');
const verdict = (s: Summary): string => (s.p50 < TARGET_P50_MS && s.p99 < TARGET_P99_MS ? 'met' : '**not met**');
const fmt = (f: AgentAudioFormat): string => `${f.encoding}/${f.sampleRate}`;

function callerTable(rows: BridgeRow[]): string[] {
  return [
    '| agent format | legs | bare UDP one-way p50 / p99 | phone send → provider frame p50 / p99 | of which in the leg p50 / p99 | p50 ratio to bare UDP | target (p50 < 5, p99 < 20) | samples |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map((r) => `| ${fmt(r.format)} | ${r.count} | ${pair(r.anchor.oneWay)} | ${pair(r.legs.callerTotal)} | ${pair(r.legs.callerInLeg)} | ${ratio(r.legs.callerTotal.p50, r.anchor.oneWay.p50)} | ${verdict(r.legs.callerTotal)} | ${r.legs.callerTotal.n} |`),
  ];
}

function agentTable(rows: BridgeRow[]): string[] {
  return [
    '| agent format | legs | bare UDP one-way p50 / p99 | onAudio → first RTP at the phone p50 / p99 | pacer slot wait (by design) p50 / p99 | added by the gateway p50 / p99 | added p50 ratio to bare UDP | target on added (p50 < 5, p99 < 20) | samples |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map((r) => `| ${fmt(r.format)} | ${r.count} | ${pair(r.anchor.oneWay)} | ${pair(r.legs.agentTotal)} | ${pair(r.legs.agentPacerSlot)} | ${pair(r.legs.agentAdded)} | ${ratio(r.legs.agentAdded.p50, r.anchor.oneWay.p50)} | ${verdict(r.legs.agentAdded)} | ${r.legs.agentTotal.n} |`),
  ];
}

function loadTable(rows: BridgeRow[]): string[] {
  return [
    '| agent format | legs | process CPU | main thread waiting for a CPU | event-loop delay p50 / p99 / max | load average | bare UDP round trip p50 / p99 |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map((r) => `| ${fmt(r.format)} | ${r.count} | ${r.load.cpuCores.toFixed(2)} cores | ${(r.load.waitingForCpu * 100).toFixed(1)} % | ${ms(r.load.loopDelayP50)} / ${ms(r.load.loopDelayP99)} / ${ms(r.load.loopDelayMax)} | ${r.load.loadAverage.toFixed(1)} | ${pair(r.anchor.roundTrip)} |`),
  ];
}

/** What the figures say, computed from them, so a rerun cannot leave a stale reading behind. */
function reading(rows: BridgeRow[], nproc: number): string[] {
  const inLeg = Math.max(...rows.map((r) => r.legs.callerInLeg.p99));
  const missed = rows.filter((r) => verdict(r.legs.callerTotal) !== 'met' || verdict(r.legs.agentAdded) !== 'met');
  const lines = [
    `- The leg's own work on a caller packet (decode, VAD, echo guard, conversion) is at most ${ms(inLeg)} ms at p99 in every row,`,
    '  so it does not explain a miss in the caller direction; the time there went to waiting for the event loop or a CPU.',
  ];
  if (missed.length === 0) lines.push('- Every row meets both targets.');
  for (const r of missed) {
    const parts: string[] = [];
    if (verdict(r.legs.callerTotal) !== 'met') {
      parts.push(`caller → provider p50 / p99 ${pair(r.legs.callerTotal)} ms against bare UDP ${pair(r.anchor.oneWay)} ms, the leg's part of it ${pair(r.legs.callerInLeg)} ms`);
    }
    if (verdict(r.legs.agentAdded) !== 'met') {
      parts.push(`provider → RTP added ${pair(r.legs.agentAdded)} ms, which includes the pacer's timer firing late (the anchor, timed from its send, never sees a late timer)`);
    }
    lines.push(
      `- ${fmt(r.format)} × ${r.count} misses a target: ${parts.join('; ')}. The event loop ran late by p50 / p99 / max ` +
        `${ms(r.load.loopDelayP50)} / ${ms(r.load.loopDelayP99)} / ${ms(r.load.loopDelayMax)} ms, with the process at ${r.load.cpuCores.toFixed(2)} cores, ` +
        `its main thread waiting for a CPU ${(r.load.waitingForCpu * 100).toFixed(0)} % of the time, and the machine at load ${r.load.loadAverage.toFixed(1)} on ${nproc} cores.`,
    );
  }
  lines.push(
    '- The phones and agents share the process and its event loop with the legs, so the loop carries about twice the packet',
    '  work a gateway alone would; the anchor pairs carry the same packet count, without the legs\' work.',
  );
  return lines;
}

/** The section for a result. */
export function bridgeMarkdown(r: BridgeResult): string {
  return [
    BRIDGE_HEADING,
    '',
    `Measured ${r.date.slice(0, 10)} on ${r.machine.nproc} cores (${r.machine.cpuModel}), Node ${r.machine.node}, Linux loopback,`,
    `a shared machine (1-minute load average ${r.machine.loadAverage.toFixed(1)} at the end of the run). All times in ms.`,
    '',
    'One process. Each leg is a real AgentMediaLeg (caller VAD and echo guard, 20 ms pacer, format conversions; no recorder)',
    'on its own RtpSession, with a phone socket sending 172-byte PCMU packets every 20 ms (a speech-like signal) and an',
    'in-process agent link that records when frames reach it and sends a 60 ms burst of audio every 200-220 ms. Legs are',
    'started spread over one 20 ms period. Before each leg phase the same run measures the anchor: as many pairs of bare',
    'UDP sockets in this process, each sending a 172-byte packet every 20 ms that the other echoes back. Samples start',
    `after a warm-up. Every phase ran ${r.rounds} times, the phases interleaved so that the machine's changing load hits all`,
    'alike; p50 and p99 are nearest-rank percentiles of the samples pooled over those rounds.',
    '',
    '### Caller RTP in → provider frame out',
    '',
    '"Phone send → provider frame" runs from the phone\'s `send()` to `AgentLink.sendAudio` and so includes the kernel',
    'crossing the anchor measures; "in the leg" starts where the RTP session hands the packet to the leg (decode, VAD, echo',
    'guard, µ-law pass-through or resampling to 16 kHz).',
    '',
    ...callerTable(r.rows),
    '',
    '### Provider audio in → RTP out',
    '',
    'From `onAudio` to the phone receiving the first packet that carries the burst. The leg plays agent audio on its own',
    '20 ms grid so the carrier sees an even stream; a burst waits for the next slot of that grid, 0-20 ms by design',
    '(per burst, up to the deadline of the pacer timer that sent it). "Added by the gateway" is the total minus that',
    'wait: timer lateness of the pacer, decoding, encoding, sending and the kernel crossing to the phone.',
    '',
    ...agentTable(r.rows),
    '',
    '### What the process had',
    '',
    'Medians over the rounds of the leg phases. Process CPU counts everything in the process (legs, phones and agents);',
    'waiting for a CPU is the main thread\'s run-queue time from /proc/self/schedstat, as a share of the phase;',
    'the event-loop delay is Node\'s `monitorEventLoopDelay` at 1 ms resolution (an idle process reads about 1.1 ms at p50,',
    'the sampling period included), and the round trip is the anchor\'s.',
    '',
    ...loadTable(r.rows),
    '',
    '### Reading the figures',
    '',
    ...reading(r.rows, r.machine.nproc),
    '',
  ].join('\n');
}
