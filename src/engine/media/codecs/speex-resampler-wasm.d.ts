/** @module Types for @echogarden/speex-resampler-wasm (the SpeexDSP resampler compiled by Emscripten). */
declare module '@echogarden/speex-resampler-wasm' {
  /** The Emscripten module: C exports plus heap views (re-read after calls: the heap may grow). */
  export interface SpeexResamplerModule {
    HEAP16: Int16Array;
    HEAPU32: Uint32Array;
    _malloc(bytes: number): number;
    _free(ptr: number): void;
    /** Returns a SpeexResamplerState*; writes an error code to *err. */
    _speex_resampler_init(channels: number, inRate: number, outRate: number, quality: number, errPtr: number): number;
    _speex_resampler_destroy(state: number): void;
    /** *inLen and *outLen are in: capacity, out: samples consumed and produced. Returns an error code. */
    _speex_resampler_process_int(state: number, channel: number, inPtr: number, inLenPtr: number, outPtr: number, outLenPtr: number): number;
    _speex_resampler_get_input_latency(state: number): number;
    _speex_resampler_get_output_latency(state: number): number;
    _speex_resampler_skip_zeros(state: number): number;
    _speex_resampler_reset_mem(state: number): number;
  }
  const load: (moduleArg?: object) => Promise<SpeexResamplerModule>;
  export default load;
}

/** The same library built with WASM SIMD (Node 16.4+): about four times faster. */
declare module '@echogarden/speex-resampler-wasm/simd' {
  import type { SpeexResamplerModule } from '@echogarden/speex-resampler-wasm';
  const load: (moduleArg?: object) => Promise<SpeexResamplerModule>;
  export default load;
}
