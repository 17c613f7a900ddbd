/** @module Types for @echogarden/fvad-wasm (libfvad, the WebRTC VAD, compiled by Emscripten). */
declare module '@echogarden/fvad-wasm' {
  /** The Emscripten module: libfvad's C API plus heap views (re-read after calls: the heap may grow). */
  export interface FvadModule {
    HEAP16: Int16Array;
    _malloc(bytes: number): number;
    _free(ptr: number): void;
    /** Returns a Fvad* handle, or 0 when out of memory. */
    _fvad_new(): number;
    _fvad_free(handle: number): void;
    _fvad_reset(handle: number): void;
    /** Mode 0 (quality) to 3 (very aggressive). Returns 0, or -1 for an invalid mode. */
    _fvad_set_mode(handle: number, mode: number): number;
    /** 8000, 16000, 32000 or 48000. Returns 0, or -1 for an invalid rate. */
    _fvad_set_sample_rate(handle: number, rate: number): number;
    /** Returns 1 (voice), 0 (no voice) or -1 (invalid frame length). */
    _fvad_process(handle: number, framePtr: number, length: number): number;
  }
  const load: (moduleArg?: object) => Promise<FvadModule>;
  export default load;
}
