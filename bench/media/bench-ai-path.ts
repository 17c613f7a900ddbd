/**
 * @module Benchmark of the AI path per call: the per-call CPU cost of feeding a WebSocket agent.
 *
 * Per 20 ms frame of one call: µ-law decode (160 samples), resample 8k→16k, WebRTC VAD on the
 * 16 kHz frame, and the frame to base64 JSON and back (serialise the outgoing media message, parse
 * an incoming one of the same size and decode its base64). A second figure adds the return path
 * (agent audio 16k→8k, playout buffer, µ-law encode), which a duplex media_bridge call also runs.
 *
 * Measured as process CPU time (user + system, GC threads included) per call-second of audio,
 * over many calls processed round-robin as fast as one thread can go. Target: one call-second
 * in under 3.33 ms of CPU, i.e. at least 300 concurrent calls on one core.
 *
 * Run: `npx tsx bench/media/bench-ai-path.ts [--write]`; --write replaces the section
 * "Media AI path (`npm run bench:media`)" of docs/PERFORMANCE.md. bench-media.ts can import
 * {@link runAiPathBench} and {@link aiPathMarkdown} and do the same.
 */
import { writeSection } from '../performance-doc.js';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import type * as MediaModule from '../../src/engine/media/index.js';
import type { PlayoutBuffer, Resampler, VadStage } from '../../src/engine/media/index.js';
import { compiled } from '../compiled.js';

// The stages from the build, as `npm start` runs them (bench/compiled.ts).
const { createResampler, linearToUlaw, PlayoutBuffer: Playout, ulawDecode, ulawEncode, VadStage: Vad, WebRtcVad } = await compiled<typeof MediaModule>('engine/media/index.js');

export interface AiPathOptions {
  calls?: number;
  secondsPerRun?: number;
  runs?: number;
}

export interface AiPathRun {
  cpuMsPerCallSecond: number;
  duplexCpuMsPerCallSecond: number;
}

export interface AiPathResult {
  date: string;
  machine: { nproc: number; cpuModel: string; node: string; loadAverage: number };
  calls: number;
  secondsPerRun: number;
  runs: AiPathRun[];
  medianCpuMsPerCallSecond: number;
  medianDuplexCpuMsPerCallSecond: number;
  callsPerCore: number;
  duplexCallsPerCore: number;
  speechEvents: number;
}

interface CallState {
  up: Resampler;
  down: Resampler;
  vad: VadStage;
  playout: PlayoutBuffer;
  pcm8: Int16Array;
  ulawOut: Buffer;
  ts: number;
}

const FRAME = 160;
const FRAMES_PER_SECOND = 50;
const TARGET_CALLS = 300;

/** Ten seconds of a speech-like signal (voiced bursts with pauses) as µ-law, shared by all calls. */
function makeUlawLoop(): Buffer {
  const n = 8000 * 10;
  const out = Buffer.alloc(n);
  let seed = 1;
  for (let i = 0; i < n; i++) {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    const voiced = Math.floor(i / 8000) % 3 !== 2;
    const pitch = 110 + 30 * Math.sin(i / 3000);
    let s = ((seed / 2 ** 32) * 2 - 1) * 60;
    if (voiced) for (let h = 1; h <= 12; h++) s += (3000 / h) * Math.sin((2 * Math.PI * pitch * h * i) / 8000);
    out[i] = linearToUlaw(Math.max(-32768, Math.min(32767, Math.round(s))));
  }
  return out;
}

async function newCall(onSpeech: () => void): Promise<CallState> {
  return {
    up: await createResampler(8000, 16000),
    down: await createResampler(16000, 8000),
    vad: new Vad(await WebRtcVad.create({ sampleRate: 16000, frameMs: 20 }), { onEvent: onSpeech }),
    playout: new Playout({ sampleRate: 8000 }),
    pcm8: new Int16Array(FRAME),
    ulawOut: Buffer.alloc(FRAME),
    ts: 0,
  };
}

/** The outgoing path: decode, resample, VAD, base64 JSON out and a same-sized message back in. */
function forward(call: CallState, ulaw: Buffer, now: number): Int16Array {
  ulawDecode(ulaw, call.pcm8);
  const wide = call.up.process(call.pcm8);
  call.vad.writeFrame({ pcm: wide, sampleRate: 16000, timestamp: call.ts, receivedAt: now });
  const payload = Buffer.from(wide.buffer, wide.byteOffset, wide.byteLength).toString('base64');
  const message = JSON.stringify({ event: 'media', media: { timestamp: call.ts, payload } });
  call.ts = (call.ts + wide.length) >>> 0;
  // "And back": the agent's reply has the same shape; parse it and decode its audio.
  const reply = JSON.parse(message) as { media: { payload: string } };
  const bytes = Buffer.from(reply.media.payload, 'base64');
  return new Int16Array(bytes.buffer, bytes.byteOffset, bytes.length >> 1);
}

/** The return path of a duplex call: agent audio down to 8 kHz, through the playout buffer, to µ-law. */
function back(call: CallState, agentPcm16: Int16Array, now: number): void {
  call.playout.push(call.down.process(agentPcm16));
  ulawEncode(call.playout.readFrame(now).pcm, call.ulawOut);
}

function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

function runOnce(calls: CallState[], loop: Buffer, seconds: number, duplex: boolean): number {
  const start = cpuMs();
  const loopFrames = loop.length / FRAME;
  for (let f = 0; f < seconds * FRAMES_PER_SECOND; f++) {
    const at = (f % loopFrames) * FRAME;
    const ulaw = loop.subarray(at, at + FRAME);
    const now = f * 20;
    for (const call of calls) {
      const reply = forward(call, ulaw, now);
      if (duplex) back(call, reply, now);
    }
  }
  return (cpuMs() - start) / (calls.length * seconds);
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
};

/** Runs the benchmark: `runs` alternating measurements of the one-way and the duplex path. */
export async function runAiPathBench(options: AiPathOptions = {}): Promise<AiPathResult> {
  const callCount = options.calls ?? TARGET_CALLS;
  const seconds = options.secondsPerRun ?? 6;
  const runCount = options.runs ?? 5;
  let speechEvents = 0;
  const calls = await Promise.all(Array.from({ length: callCount }, () => newCall(() => speechEvents++)));
  const loop = makeUlawLoop();
  runOnce(calls, loop, 2, true); // warm-up: JIT, WASM tiers, heap growth
  const runs: AiPathRun[] = [];
  for (let r = 0; r < runCount; r++) {
    runs.push({ cpuMsPerCallSecond: runOnce(calls, loop, seconds, false), duplexCpuMsPerCallSecond: runOnce(calls, loop, seconds, true) });
  }
  for (const c of calls) {
    c.up.close();
    c.down.close();
    c.vad.close();
  }
  const oneWay = median(runs.map((r) => r.cpuMsPerCallSecond));
  const duplex = median(runs.map((r) => r.duplexCpuMsPerCallSecond));
  return {
    date: new Date().toISOString(),
    machine: { nproc: availableParallelism(), cpuModel: cpus()[0]?.model.trim() ?? 'unknown', node: process.version, loadAverage: loadavg()[0] ?? 0 },
    calls: callCount,
    secondsPerRun: seconds,
    runs,
    medianCpuMsPerCallSecond: oneWay,
    medianDuplexCpuMsPerCallSecond: duplex,
    callsPerCore: Math.floor(1000 / oneWay),
    duplexCallsPerCore: Math.floor(1000 / duplex),
    speechEvents,
  };
}

export const AI_PATH_HEADING = '## Media AI path (`npm run bench:media`)';

/** The docs/PERFORMANCE.md section for a result. */
export function aiPathMarkdown(r: AiPathResult): string {
  const verdict = r.callsPerCore >= TARGET_CALLS ? 'met' : 'NOT met';
  const runs = r.runs.map((x) => `${x.cpuMsPerCallSecond.toFixed(3)} / ${x.duplexCpuMsPerCallSecond.toFixed(3)}`).join('; ');
  return [
    AI_PATH_HEADING,
    '',
    `Measured ${r.date.slice(0, 10)} on ${r.machine.nproc} cores (${r.machine.cpuModel}), Node ${r.machine.node}, a shared machine`,
    `(1-minute load average ${r.machine.loadAverage.toFixed(1)} at the end of the run: CPU time, not wall time, is what counts here).`,
    '',
    'Per 20 ms frame of each call: µ-law decode, resample 8→16 kHz (SpeexDSP WASM, quality 5), WebRTC VAD',
    '(fvad WASM, 20 ms at 16 kHz, speech-start/stop stage), the 16 kHz frame to a base64 JSON media message and',
    'back (parse and base64-decode a message of the same size). "Duplex" adds the return path: agent audio',
    '16→8 kHz, playout buffer, µ-law encode. CPU is process user+system time (GC threads included), with',
    `${r.calls} calls processed round-robin on one thread, ${r.secondsPerRun} s of audio per call per run, median of ${r.runs.length} runs.`,
    'The stages come from the compiled build (`dist/`).',
    '',
    '| path | CPU per call-second (median) | calls per core | target |',
    '| --- | --- | --- | --- |',
    `| AI path (decode, resample, VAD, base64 JSON and back) | ${r.medianCpuMsPerCallSecond.toFixed(3)} ms | ${r.callsPerCore} | ≥ ${TARGET_CALLS}: ${verdict} |`,
    `| duplex (adds agent audio back to µ-law) | ${r.medianDuplexCpuMsPerCallSecond.toFixed(3)} ms | ${r.duplexCallsPerCore} | (no target) |`,
    '',
    `Runs (one-way / duplex ms per call-second): ${runs}.`,
    '',
    'Run alone: `npx tsx bench/media/bench-ai-path.ts --write`.',
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  const result = await runAiPathBench();
  const section = aiPathMarkdown(result);
  process.stdout.write(`${section}\n`);
  // BENCH_NO_WRITE=1 holds for the whole of `npm run bench:media`, which passes --write.
  if (process.argv.includes('--write') && process.env.BENCH_NO_WRITE !== '1') {
    writeSection(AI_PATH_HEADING, section);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
