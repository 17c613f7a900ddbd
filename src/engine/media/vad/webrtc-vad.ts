/** @module WebRTC voice activity detection (libfvad in WASM): one speech/non-speech decision per frame. */
import loadFvad, { type FvadModule } from '@echogarden/fvad-wasm';

/** libfvad aggressiveness: 0 flags the most audio as speech, 3 the least (fewest false alarms). */
export type VadMode = 0 | 1 | 2 | 3;
/** Rates libfvad accepts (it resamples 32/48 kHz to 8 kHz internally). */
export type VadRate = 8000 | 16000 | 32000 | 48000;
/** The frame lengths the WebRTC VAD is defined for. */
export type VadFrameMs = 10 | 20 | 30;

/** Options of {@link WebRtcVad.create}. */
export interface WebRtcVadOptions {
  sampleRate: VadRate;
  frameMs: VadFrameMs;
  /** Default 3: telephony carries line noise, and a false barge-in costs more than a late one. */
  mode?: VadMode;
}

let fvadModule: Promise<FvadModule> | undefined;
let loadedFvad: FvadModule | null = null;
/** Detectors made and not yet closed. */
let openDetectors = 0;

/** One WASM instance per process; each call holds only its own detector state in the shared heap. */
function fvad(): Promise<FvadModule> {
  fvadModule ??= loadFvad().then((m) => (loadedFvad = m));
  return fvadModule;
}

/**
 * What the VAD holds in WASM: detectors not yet closed, and the module's memory in bytes (null
 * before the first detector). The memory grows when detectors leak and never shrinks; the count
 * returns to where it was once every call that made one is over (docs/ARCHITECTURE.md "Media ownership").
 */
export function vadWasmUsage(): { detectors: number; memoryBytes: number | null } {
  return { detectors: openDetectors, memoryBytes: loadedFvad?.HEAP16.buffer.byteLength ?? null };
}

/** A per-stream WebRTC VAD. Keeps state (noise estimates) across frames, so one per stream. */
export class WebRtcVad {
  readonly sampleRate: VadRate;
  readonly frameMs: VadFrameMs;
  readonly frameSamples: number;
  readonly mode: VadMode;
  readonly #m: FvadModule;
  #handle: number;
  readonly #framePtr: number;

  private constructor(m: FvadModule, options: WebRtcVadOptions) {
    this.#m = m;
    this.sampleRate = options.sampleRate;
    this.frameMs = options.frameMs;
    this.mode = options.mode ?? 3;
    this.frameSamples = (this.sampleRate / 1000) * this.frameMs;
    this.#handle = m._fvad_new();
    if (this.#handle === 0) throw new Error('fvad_new: out of memory');
    if (m._fvad_set_mode(this.#handle, this.mode) !== 0 || m._fvad_set_sample_rate(this.#handle, this.sampleRate) !== 0) {
      m._fvad_free(this.#handle);
      throw new RangeError(`fvad rejected mode ${this.mode} or rate ${this.sampleRate}`);
    }
    this.#framePtr = m._malloc(this.frameSamples * 2);
    openDetectors++;
  }

  static async create(options: WebRtcVadOptions): Promise<WebRtcVad> {
    if (![8000, 16000, 32000, 48000].includes(options.sampleRate)) throw new RangeError(`VAD rate ${options.sampleRate} unsupported`);
    if (![10, 20, 30].includes(options.frameMs)) throw new RangeError(`VAD frame of ${options.frameMs} ms unsupported`);
    return new WebRtcVad(await fvad(), options);
  }

  /** Classifies exactly one frame of `frameSamples` samples. */
  isSpeech(frame: Int16Array): boolean {
    if (this.#handle === 0) throw new Error('WebRtcVad used after close()');
    if (frame.length !== this.frameSamples) throw new RangeError(`VAD frame has ${frame.length} samples, needs ${this.frameSamples}`);
    // Re-read the heap view on every call: the WASM memory may have grown.
    this.#m.HEAP16.set(frame, this.#framePtr >> 1);
    const result = this.#m._fvad_process(this.#handle, this.#framePtr, this.frameSamples);
    if (result < 0) throw new Error('fvad_process rejected the frame');
    return result === 1;
  }

  /** Forgets the noise estimates (a new speaker or a new leg). */
  reset(): void {
    if (this.#handle !== 0) this.#m._fvad_reset(this.#handle);
  }

  describe(): string {
    return `webrtc-vad(mode ${this.mode}, ${this.sampleRate} Hz, ${this.frameMs} ms)`;
  }

  close(): void {
    if (this.#handle === 0) return;
    this.#m._fvad_free(this.#handle);
    this.#m._free(this.#framePtr);
    this.#handle = 0;
    openDetectors--;
  }
}
