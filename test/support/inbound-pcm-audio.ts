/**
 * @module Audio checks in the formats agent platforms declare: a 16-bit little-endian PCM tone at
 * any rate, the strength of one frequency in such audio, and the loudest sample of µ-law packets.
 */
import { ulawToLinear } from '../../src/engine/media/index.js';

/** `ms` of a sine at `hz` (amplitude 8000 of 32767) as 16-bit LE mono PCM at `rate`. */
export function pcm16Tone(hz: number, ms: number, rate: number, amplitude = 8000): Buffer {
  const n = Math.round((rate * ms) / 1000);
  const out = Buffer.alloc(2 * n);
  for (let i = 0; i < n; i++) out.writeInt16LE(Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / rate)), 2 * i);
  return out;
}

/**
 * The amplitude of `hz` in 16-bit LE PCM sampled at `rate` (Goertzel over the strongest 100 ms
 * block), in linear sample units. Read at the wrong rate, a tone shows up at another frequency,
 * so a strong answer also says the audio is at `rate`.
 */
export function pcm16ToneLevel(pcm: Buffer, hz: number, rate: number): number {
  const block = rate / 10;
  const samples = Math.floor(pcm.length / 2);
  const coeff = 2 * Math.cos((2 * Math.PI * hz) / rate);
  let best = 0;
  for (let start = 0; start + block <= samples; start += block / 2) {
    let s1 = 0;
    let s2 = 0;
    for (let i = 0; i < block; i++) {
      const s0 = pcm.readInt16LE(2 * (start + i)) + coeff * s1 - s2;
      s2 = s1;
      s1 = s0;
    }
    const power = s1 * s1 + s2 * s2 - coeff * s1 * s2;
    best = Math.max(best, (2 * Math.sqrt(Math.max(power, 0))) / block);
  }
  return best;
}

/** Loudest sample, linear, of one µ-law payload. */
export function mulawPeak(payload: Buffer): number {
  let max = 0;
  for (const b of payload) max = Math.max(max, Math.abs(ulawToLinear(b)));
  return max;
}
