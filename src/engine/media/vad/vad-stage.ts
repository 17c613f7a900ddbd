/** @module VAD as a pipeline stage: speech-start and speech-stop events with onset and hangover. */
import type { AudioFrame } from '../pipeline/audio-frame.js';
import type { AudioSink } from '../pipeline/audio-stage.js';
import type { WebRtcVad } from './webrtc-vad.js';

/** A change of speaking state. `timestamp` is the RTP timestamp where it happened. */
export interface VadEvent {
  type: 'speech-start' | 'speech-stop';
  timestamp: number;
  /** Monotonic ms of the frame that made the decision (not when speech began). */
  at: number;
}

/** Options of {@link VadStage}. */
export interface VadStageOptions {
  /** Consecutive speech needed before speech-start, so a click is not speech. Default 60 ms. */
  onsetMs?: number;
  /** Non-speech needed before speech-stop, so pauses between words do not split. Default 400 ms. */
  hangoverMs?: number;
  /**
   * Decisions ignored at the start of a stream. The WebRTC VAD starts from a default noise
   * estimate and flags the first ~80 ms of a noisy line as speech while it adapts. Default 200 ms.
   */
  warmupMs?: number;
  onEvent: (event: VadEvent) => void;
}

/**
 * Cuts incoming frames (any length, at the VAD's rate) into VAD frames, classifies each, and
 * turns the decisions into events. The speech-start timestamp is the first speech frame of the
 * onset run; the speech-stop timestamp is the end of the last speech frame.
 */
export class VadStage implements AudioSink {
  readonly #vad: WebRtcVad;
  readonly #onsetFrames: number;
  readonly #hangoverFrames: number;
  readonly #onEvent: (event: VadEvent) => void;
  readonly #chunk: Int16Array;
  #fill = 0;
  /** RTP timestamp of the first sample in #chunk. */
  #chunkTs = 0;
  #speaking = false;
  #run = 0;
  #runStartTs = 0;
  #lastSpeechEndTs = 0;
  #warmupLeft: number;

  constructor(vad: WebRtcVad, options: VadStageOptions) {
    this.#vad = vad;
    this.#onsetFrames = Math.max(1, Math.round((options.onsetMs ?? 60) / vad.frameMs));
    this.#hangoverFrames = Math.max(1, Math.round((options.hangoverMs ?? 400) / vad.frameMs));
    this.#onEvent = options.onEvent;
    this.#warmupLeft = Math.round((options.warmupMs ?? 200) / vad.frameMs);
    this.#chunk = new Int16Array(vad.frameSamples);
  }

  /** Whether the stage currently considers the stream to be speech (after onset and hangover). */
  get isSpeaking(): boolean {
    return this.#speaking;
  }

  writeFrame(frame: AudioFrame): void {
    if (frame.sampleRate !== this.#vad.sampleRate) throw new RangeError(`${this.describe()} got ${frame.sampleRate} Hz`);
    const pcm = frame.pcm;
    const size = this.#chunk.length;
    for (let i = 0; i < pcm.length; ) {
      if (this.#fill === 0) this.#chunkTs = (frame.timestamp + i) >>> 0;
      const n = Math.min(size - this.#fill, pcm.length - i);
      this.#chunk.set(pcm.subarray(i, i + n), this.#fill);
      this.#fill += n;
      i += n;
      if (this.#fill === size) {
        this.#fill = 0;
        const speech = this.#vad.isSpeech(this.#chunk);
        if (this.#warmupLeft > 0) this.#warmupLeft--;
        else this.#decide(speech, frame.receivedAt);
      }
    }
  }

  #decide(speech: boolean, at: number): void {
    const ts = this.#chunkTs;
    const end = (ts + this.#chunk.length) >>> 0;
    // A run counts consecutive frames that disagree with the current state.
    if (speech === this.#speaking) {
      this.#run = 0;
      if (speech) this.#lastSpeechEndTs = end;
      return;
    }
    if (this.#run === 0) this.#runStartTs = ts;
    this.#run++;
    if (!this.#speaking && this.#run >= this.#onsetFrames) {
      this.#speaking = true;
      this.#run = 0;
      this.#lastSpeechEndTs = end;
      this.#onEvent({ type: 'speech-start', timestamp: this.#runStartTs, at });
    } else if (this.#speaking && this.#run >= this.#hangoverFrames) {
      this.#speaking = false;
      this.#run = 0;
      this.#onEvent({ type: 'speech-stop', timestamp: this.#lastSpeechEndTs, at });
    }
  }

  describe(): string {
    return `vad-events(${this.#vad.describe()})`;
  }

  close(): void {
    this.#vad.close();
  }
}
