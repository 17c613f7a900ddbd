/**
 * @module What in-band DTMF detection (the Goertzel detector, ITU-T Q.24) costs per 20 ms frame,
 * as it runs on the caller's audio of every call whose carrier leg has no telephone-event.
 *
 * The input is speech-like: 4 s of three wandering tones under noise (no key in it), µ-law encoded
 * and decoded as a carrier leg delivers it, fed 160 samples at a time. The anchor, measured in the
 * same run on the same frames, is the µ-law decode of a frame (`decodeG711`), which every caller
 * frame pays anyway. Figures are thread CPU time per frame, median of 7 runs of 200,000 frames.
 * Run: `npx tsx bench/media/bench-dtmf-detector.ts`.
 */
import { cpus, loadavg } from 'node:os';
import type * as MediaModule from '../../src/engine/media/index.js';
import { compiled } from '../compiled.js';

const { decodeG711, GoertzelDtmfDetector, linearToUlaw } = await compiled<typeof MediaModule>('engine/media/index.js');

const FRAME = 160;
const FRAMES_PER_RUN = 200_000;
const RUNS = 7;

/** 4 s of µ-law: three tones gliding through the voice band, plus noise. */
function speechLike(): Buffer[] {
  const seconds = 4;
  const out = Buffer.alloc(8000 * seconds);
  let seed = 1;
  const noise = (): number => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff - 0.5) * 800;
  for (let i = 0; i < out.length; i++) {
    const t = i / 8000;
    const f1 = 220 + 80 * Math.sin(2 * Math.PI * 0.7 * t);
    const f2 = 1100 + 300 * Math.sin(2 * Math.PI * 0.3 * t);
    const f3 = 2400 + 200 * Math.sin(2 * Math.PI * 0.5 * t);
    const x = 6000 * Math.sin(2 * Math.PI * f1 * t) + 2500 * Math.sin(2 * Math.PI * f2 * t) + 900 * Math.sin(2 * Math.PI * f3 * t) + noise();
    out[i] = linearToUlaw(Math.round(x));
  }
  return Array.from({ length: out.length / FRAME }, (_, k) => out.subarray(k * FRAME, (k + 1) * FRAME));
}

/** µs of CPU per frame for `work` over FRAMES_PER_RUN frames. */
function timed(frames: Buffer[], work: (frame: Buffer) => void): number {
  const start = process.cpuUsage();
  for (let i = 0; i < FRAMES_PER_RUN; i++) work(frames[i % frames.length]!);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / FRAMES_PER_RUN;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1]!;

const frames = speechLike();
const pcm = new Int16Array(FRAME);
const detector = new GoertzelDtmfDetector();
let keys = 0;
const decodeOnly = (frame: Buffer): void => void decodeG711('PCMU', frame, pcm);
const decodeAndDetect = (frame: Buffer): void => {
  decodeG711('PCMU', frame, pcm);
  if (detector.process(pcm) !== null) keys++;
};
// Warm both paths up so the runs measure optimized code.
timed(frames, decodeOnly);
timed(frames, decodeAndDetect);
const decode: number[] = [];
const detect: number[] = [];
for (let run = 0; run < RUNS; run++) {
  decode.push(timed(frames, decodeOnly));
  detect.push(timed(frames, decodeAndDetect) - decode[decode.length - 1]!);
}
const [d, g] = [median(decode), median(detect)];
console.log(`runs, detector µs per frame: ${detect.map((x) => x.toFixed(2)).join(', ')}`);
console.log(`median per 20 ms frame: µ-law decode (anchor) ${d.toFixed(2)} µs, Goertzel detector ${g.toFixed(2)} µs (${(g / d).toFixed(1)} times the decode); keys found in speech: ${keys}`);
console.log(`${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, load ${loadavg()[0]!.toFixed(1)}, ${new Date().toISOString()}`);
