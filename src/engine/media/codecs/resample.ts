/** @module Streaming sample-rate conversion between 8, 16, 24 and 48 kHz for audio taps and agent audio. */
import type { SpeexResamplerModule } from '@echogarden/speex-resampler-wasm';
// The SIMD build: about 11 µs per 20 ms block 8k→16k here, against about 50 µs without SIMD.
import loadSpeexResampler from '@echogarden/speex-resampler-wasm/simd';

/** The rates the media engine converts between: telephony, wideband, and what AI vendors speak. */
export const SUPPORTED_RATES = [8000, 16000, 24000, 48000] as const;
export type SupportedRate = (typeof SUPPORTED_RATES)[number];

/**
 * Converts a stream of mono PCM16 blocks (typically 20 ms) from one rate to another. The filter
 * state is kept between calls, so consecutive blocks join without clicks: one instance per
 * stream, never shared between calls.
 */
export interface Resampler {
  readonly inputRate: SupportedRate;
  readonly outputRate: SupportedRate;
  /** Group delay of the filter, in output samples (what a test aligns for). */
  readonly delaySamples: number;
  /**
   * Converts one block. The result is a view on a buffer owned by the resampler and is valid
   * only until the next call: copy it to keep it.
   */
  process(pcm: Int16Array): Int16Array;
  describe(): string;
  /** Frees the native state. Further calls throw. */
  close(): void;
}

/** Options of {@link createResampler}. */
export interface ResamplerOptions {
  /**
   * SpeexDSP quality 0..10. 5 (the default) keeps a tone through 8k→16k→8k above 100 dB SNR;
   * 10 costs about five times as much for no audible gain on telephony.
   */
  quality?: number;
}

const DEFAULT_QUALITY = 5;
const RESAMPLER_ERR_SUCCESS = 0;
/** Initial native buffer size in samples: 60 ms at 48 kHz, grown on demand. */
const INITIAL_CAPACITY = 2880;

let speexModule: Promise<SpeexResamplerModule> | undefined;
let loadedSpeex: SpeexResamplerModule | null = null;
/** Speex resamplers made and not yet closed. */
let openResamplers = 0;

/**
 * What resampling holds in WASM: Speex resamplers not yet closed, and the module's memory in
 * bytes (null before the first). As `vadWasmUsage`: the count must return to where it was.
 */
export function resamplerWasmUsage(): { resamplers: number; memoryBytes: number | null } {
  return { resamplers: openResamplers, memoryBytes: loadedSpeex?.HEAPU32.buffer.byteLength ?? null };
}

/**
 * One WASM instance serves every resampler of the process: each call holds only its own
 * filter state (a few KiB) in the shared heap.
 */
function speex(): Promise<SpeexResamplerModule> {
  speexModule ??= loadSpeexResampler().then((m) => (loadedSpeex = m));
  return speexModule;
}

function isSupportedRate(rate: number): rate is SupportedRate {
  return (SUPPORTED_RATES as readonly number[]).includes(rate);
}

/** Creates a resampler; equal rates give a pass-through that copies nothing. */
export async function createResampler(inputRate: number, outputRate: number, options: ResamplerOptions = {}): Promise<Resampler> {
  if (!isSupportedRate(inputRate) || !isSupportedRate(outputRate)) {
    throw new RangeError(`unsupported resampling ${inputRate} → ${outputRate} Hz (supported: ${SUPPORTED_RATES.join(', ')})`);
  }
  if (inputRate === outputRate) return new PassThroughResampler(inputRate);
  const quality = options.quality ?? DEFAULT_QUALITY;
  if (!Number.isInteger(quality) || quality < 0 || quality > 10) throw new RangeError(`speex quality ${quality} is not 0..10`);
  return new SpeexResampler(await speex(), inputRate, outputRate, quality);
}

class PassThroughResampler implements Resampler {
  readonly inputRate: SupportedRate;
  readonly outputRate: SupportedRate;
  readonly delaySamples = 0;

  constructor(rate: SupportedRate) {
    this.inputRate = rate;
    this.outputRate = rate;
  }

  process(pcm: Int16Array): Int16Array {
    return pcm;
  }

  describe(): string {
    return `resample(${this.inputRate} Hz, pass-through)`;
  }

  close(): void {}
}

/** SpeexDSP's polyphase resampler (the one in libspeexdsp), driven through its int16 API. */
class SpeexResampler implements Resampler {
  readonly inputRate: SupportedRate;
  readonly outputRate: SupportedRate;
  readonly delaySamples: number;
  readonly #m: SpeexResamplerModule;
  readonly #quality: number;
  #state: number;
  #capacity = 0;
  #inPtr = 0;
  #outPtr = 0;
  /** Two uint32 cells: *in_len and *out_len. */
  readonly #lenPtr: number;
  #out: Int16Array;

  constructor(m: SpeexResamplerModule, inputRate: SupportedRate, outputRate: SupportedRate, quality: number) {
    this.#m = m;
    this.inputRate = inputRate;
    this.outputRate = outputRate;
    this.#quality = quality;
    this.#lenPtr = m._malloc(8);
    this.#state = m._speex_resampler_init(1, inputRate, outputRate, quality, this.#lenPtr);
    const err = m.HEAPU32[this.#lenPtr >> 2];
    if (this.#state === 0 || err !== RESAMPLER_ERR_SUCCESS) throw new Error(`speex_resampler_init failed (${err})`);
    this.delaySamples = m._speex_resampler_get_output_latency(this.#state);
    this.#out = new Int16Array(0);
    this.#reserve(INITIAL_CAPACITY);
    openResamplers++;
  }

  #reserve(inputSamples: number): void {
    if (inputSamples <= this.#capacity) return;
    const m = this.#m;
    if (this.#capacity > 0) {
      m._free(this.#inPtr);
      m._free(this.#outPtr);
    }
    this.#capacity = inputSamples;
    this.#inPtr = m._malloc(inputSamples * 2);
    this.#outPtr = m._malloc(this.#outCapacity() * 2);
    this.#out = new Int16Array(this.#outCapacity());
  }

  #outCapacity(): number {
    // Room for the ratio plus rounding: the filter may emit one sample more on some blocks.
    return Math.ceil((this.#capacity * this.outputRate) / this.inputRate) + 16;
  }

  process(pcm: Int16Array): Int16Array {
    if (this.#state === 0) throw new Error(`${this.describe()} used after close()`);
    this.#reserve(pcm.length);
    const m = this.#m;
    // The heap views are re-read on every call because the WASM memory may have grown.
    m.HEAP16.set(pcm, this.#inPtr >> 1);
    const lens = m.HEAPU32;
    lens[this.#lenPtr >> 2] = pcm.length;
    lens[(this.#lenPtr >> 2) + 1] = this.#outCapacity();
    const err = m._speex_resampler_process_int(this.#state, 0, this.#inPtr, this.#lenPtr, this.#outPtr, this.#lenPtr + 4);
    if (err !== RESAMPLER_ERR_SUCCESS) throw new Error(`speex_resampler_process_int failed (${err})`);
    const produced = m.HEAPU32[(this.#lenPtr >> 2) + 1] ?? 0;
    const start = this.#outPtr >> 1;
    this.#out.set(m.HEAP16.subarray(start, start + produced));
    return this.#out.subarray(0, produced);
  }

  describe(): string {
    return `resample(${this.inputRate}→${this.outputRate} Hz, speex q${this.#quality})`;
  }

  close(): void {
    if (this.#state === 0) return;
    const m = this.#m;
    m._speex_resampler_destroy(this.#state);
    m._free(this.#inPtr);
    m._free(this.#outPtr);
    m._free(this.#lenPtr);
    this.#state = 0;
    openResamplers--;
  }
}
