/**
 * @module Audio checks for end-to-end tests: a µ-law test tone, how strong one frequency is in
 * µ-law audio, and how closely a recording carries a known signal.
 */
import { execFileSync } from 'node:child_process';
import { linearToUlaw, ulawToLinear } from '../../src/engine/media/index.js';

const RATE = 8000;

/** `ms` of a sine at `hz` (amplitude 8000 of 32767) as G.711 µ-law bytes. */
export function mulawTone(hz: number, ms: number, amplitude = 8000): Buffer {
  const n = (RATE * ms) / 1000;
  const out = Buffer.alloc(n);
  for (let i = 0; i < n; i++) out[i] = linearToUlaw(Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / RATE)));
  return out;
}

/**
 * The amplitude of `hz` in µ-law audio (Goertzel over the strongest 100 ms block), in linear
 * sample units: a full-scale sine at that frequency gives about its amplitude, silence about 0.
 */
export function toneLevel(mulaw: Buffer, hz: number): number {
  const block = 800;
  const coeff = 2 * Math.cos((2 * Math.PI * hz) / RATE);
  let best = 0;
  for (let start = 0; start + block <= mulaw.length; start += block / 2) {
    let s1 = 0;
    let s2 = 0;
    for (let i = 0; i < block; i++) {
      const s0 = ulawToLinear(mulaw[start + i]!) + coeff * s1 - s2;
      s2 = s1;
      s1 = s0;
    }
    const power = s1 * s1 + s2 * s2 - coeff * s1 * s2;
    best = Math.max(best, (2 * Math.sqrt(Math.max(power, 0))) / block);
  }
  return best;
}

/** Any WAV (or other sox input) as 8 kHz mono signed 16-bit samples, through sox. */
export function samples8k(path: string): Int16Array {
  const raw = execFileSync('sox', [path, '-t', 'raw', '-r', String(RATE), '-c', '1', '-e', 'signed', '-b', '16', '-'], { maxBuffer: 64 << 20 });
  return new Int16Array(raw.buffer, raw.byteOffset, raw.length >> 1);
}

/**
 * The peak over all lags of the normalized cross-correlation of `source` against `recording`:
 * sum(x[n]·y[n+lag]) / sqrt(sum x² · sum y²[window]), 1.0 for an exact (scaled) copy.
 */
export function correlationPeak(source: Int16Array, recording: Int16Array): { peak: number; lag: number } {
  let sx = 0;
  for (const v of source) sx += v * v;
  // Energy of the recording window starting at each lag, kept as a running sum.
  let sy = 0;
  for (let i = 0; i < source.length && i < recording.length; i++) sy += recording[i]! * recording[i]!;
  let best = { peak: 0, lag: 0 };
  for (let lag = 0; lag + source.length <= recording.length; lag++) {
    let dot = 0;
    for (let i = 0; i < source.length; i++) dot += source[i]! * recording[lag + i]!;
    const norm = Math.sqrt(sx * sy);
    const c = norm > 0 ? dot / norm : 0;
    if (c > best.peak) best = { peak: c, lag };
    const out = recording[lag]!;
    const incoming = recording[lag + source.length] ?? 0;
    sy += incoming * incoming - out * out;
  }
  return best;
}
