/** @module What a WAV file holds, read from its header: format, channels and duration. */
import { readFileSync, statSync } from 'node:fs';
import wavefile from 'wavefile';

export interface WavInfo {
  bytes: number;
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  /** Audio in the data chunk, in seconds. */
  durationS: number;
}

/** Reads `path`'s header (through wavefile, which checks the RIFF structure) and its size. */
export function readWavInfo(path: string): WavInfo {
  const wav = new wavefile.WaveFile(readFileSync(path));
  const fmt = wav.fmt as { sampleRate: number; numChannels: number; bitsPerSample: number };
  const data = wav.data as { chunkSize: number };
  const bytesPerSecond = fmt.sampleRate * fmt.numChannels * (fmt.bitsPerSample / 8);
  return {
    bytes: statSync(path).size,
    sampleRate: fmt.sampleRate,
    channels: fmt.numChannels,
    bitsPerSample: fmt.bitsPerSample,
    durationS: bytesPerSecond > 0 ? data.chunkSize / bytesPerSecond : 0,
  };
}
