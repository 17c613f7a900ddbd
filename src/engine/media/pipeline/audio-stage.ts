/** @module Audio sources, sinks and the small stages that wrap one another to form a tap pipeline. */
import type { Resampler } from '../codecs/resample.js';
import type { AudioFrame } from './audio-frame.js';

/**
 * Something that consumes PCM frames: a recorder channel, a VAD, an agent WebSocket bridge, or
 * a stage that transforms frames and passes them to the sink it wraps. `writeFrame` must not
 * keep `frame.pcm` after returning (copy it), so producers can reuse one buffer per call.
 */
export interface AudioSink {
  writeFrame(frame: AudioFrame): void;
  /** One line naming the stage and, for wrappers, the chain after it (for logs). */
  describe(): string;
  /** Releases native state and closes wrapped sinks. Idempotent. */
  close(): void;
}

/**
 * Something that produces PCM on demand, pulled by the 20 ms pacer. The same contract as the
 * bridge's generated-audio sources (hold music), so either can be paced onto a leg.
 */
export interface AudioSource {
  /** Fills `out` and returns the samples written; fewer than `out.length` means the source ended. */
  read(out: Int16Array): number;
  describe(): string;
}

/** A stage hands its output to the next sink; `describe()` shows the whole chain. */
export abstract class AudioStage implements AudioSink {
  protected readonly next: AudioSink;
  #closed = false;

  constructor(next: AudioSink) {
    this.next = next;
  }

  abstract writeFrame(frame: AudioFrame): void;
  protected abstract describeSelf(): string;

  describe(): string {
    return `${this.describeSelf()} → ${this.next.describe()}`;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.closeSelf();
    this.next.close();
  }

  protected closeSelf(): void {}
}

/** Converts frames to the rate the wrapped sink wants (an agent speaking 16 or 24 kHz). */
export class ResampleStage extends AudioStage {
  readonly #resampler: Resampler;
  readonly #frame: AudioFrame;

  constructor(resampler: Resampler, next: AudioSink) {
    super(next);
    this.#resampler = resampler;
    this.#frame = { pcm: new Int16Array(0), sampleRate: resampler.outputRate, timestamp: 0, receivedAt: 0 };
  }

  writeFrame(frame: AudioFrame): void {
    if (frame.sampleRate !== this.#resampler.inputRate) {
      throw new RangeError(`${this.describeSelf()} got a ${frame.sampleRate} Hz frame`);
    }
    const out = this.#frame;
    out.pcm = this.#resampler.process(frame.pcm);
    // The timestamp is rescaled so consumers can still order and align frames.
    out.timestamp = Math.round((frame.timestamp * this.#resampler.outputRate) / this.#resampler.inputRate) >>> 0;
    out.receivedAt = frame.receivedAt;
    this.next.writeFrame(out);
  }

  protected describeSelf(): string {
    return this.#resampler.describe();
  }

  protected override closeSelf(): void {
    this.#resampler.close();
  }
}

/** Feeds one tap to several consumers (recording, VAD, transcription) in order. */
export class FanOutSink implements AudioSink {
  readonly #sinks: AudioSink[];

  constructor(sinks: AudioSink[]) {
    this.#sinks = [...sinks];
  }

  add(sink: AudioSink): void {
    this.#sinks.push(sink);
  }

  /** Detaches a consumer without closing it (its owner closes it). */
  remove(sink: AudioSink): void {
    const i = this.#sinks.indexOf(sink);
    if (i >= 0) this.#sinks.splice(i, 1);
  }

  writeFrame(frame: AudioFrame): void {
    for (const sink of this.#sinks) sink.writeFrame(frame);
  }

  describe(): string {
    return `fan-out[${this.#sinks.map((s) => s.describe()).join(' | ')}]`;
  }

  close(): void {
    for (const sink of this.#sinks.splice(0)) sink.close();
  }
}

/** The end of a chain that hands frames to a function (an agent bridge's send, a test's array). */
export class CallbackSink implements AudioSink {
  readonly #name: string;
  readonly #onFrame: (frame: AudioFrame) => void;

  constructor(name: string, onFrame: (frame: AudioFrame) => void) {
    this.#name = name;
    this.#onFrame = onFrame;
  }

  writeFrame(frame: AudioFrame): void {
    this.#onFrame(frame);
  }

  describe(): string {
    return this.#name;
  }

  close(): void {}
}
