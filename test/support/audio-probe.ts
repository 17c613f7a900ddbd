/** @module Audio checks for end-to-end tests: a µ-law test tone, and how strong one frequency is in µ-law audio. */
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
