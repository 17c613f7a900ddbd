/** @module Audio files the gateway plays (hold music, prompts): WAV decoded once to 8 kHz mono 16-bit PCM. */
import { readFile } from 'node:fs/promises';
import wavefile from 'wavefile';

const RATE = 8000;

/**
 * A WAV (any rate, 8/16/24/32-bit, mono or stereo) as 8 kHz mono 16-bit PCM: wavefile converts the
 * depth and resamples with its anti-aliasing filter; of several channels the first is kept.
 * @throws Error when the bytes are not a WAV wavefile can read.
 */
export function wavToPcm8k(bytes: Buffer): Int16Array {
  const wav = new wavefile.WaveFile(bytes);
  const fmt = wav.fmt as { sampleRate?: number };
  if (wav.bitDepth !== '16') wav.toBitDepth('16');
  if (fmt.sampleRate !== RATE) wav.toSampleRate(RATE);
  const samples = wav.getSamples(false, Int16Array) as unknown as Int16Array | Int16Array[];
  const first = Array.isArray(samples) ? samples[0] : samples;
  return first ?? new Int16Array(0);
}

/** Reads and decodes a WAV file; see {@link wavToPcm8k}. */
export async function loadWavPcm8k(path: string): Promise<Int16Array> {
  return wavToPcm8k(await readFile(path));
}
