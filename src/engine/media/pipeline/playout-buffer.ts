/** @module Playout buffer for agent audio: absorbs bursts, is paced out in 20 ms frames, flushes for barge-in. */
import type { AudioFrame } from './audio-frame.js';
import type { AudioSink, AudioSource } from './audio-stage.js';

/** How a mark ended: its audio was played, or it was dropped by flush() or by overflow. */
export type MarkOutcome = 'played' | 'flushed' | 'overflowed';

/** Options of {@link PlayoutBuffer}. */
export interface PlayoutBufferOptions {
  /** Rate of the audio pushed and pulled (resampling happens before the buffer). Default 8000. */
  sampleRate?: number;
  /** Frame length pulled by the pacer. Default 20 ms. */
  frameMs?: number;
  /**
   * Most audio held at once. Text-to-speech often arrives many times faster than real time, so
   * this is generous; past it the oldest audio is dropped. Default 60 s.
   */
  maxQueueMs?: number;
  /** Called when the audio queued before a mark has been played, flushed or dropped. */
  onMark?: (name: string, outcome: MarkOutcome) => void;
}

/** Counters for call detail and metrics. */
export interface PlayoutStats {
  framesPlayed: number;
  /** Frames pulled while the queue was empty (silence was played). */
  underruns: number;
  /** Samples dropped because the queue was full. */
  overflowSamples: number;
  /** Samples dropped by flush(). */
  flushedSamples: number;
}

/** Ring size a buffer starts with, in seconds of audio (it grows when an agent sends further ahead). */
const INITIAL_QUEUE_S = 2;

/**
 * A bounded queue of samples between an agent (which sends audio in chunks of any size, faster
 * or slower than real time) and the 20 ms pacer (which pulls exactly one frame per tick). It
 * never blocks the pacer: an empty queue plays silence. Positions are absolute sample counts,
 * so marks need no bookkeeping when the ring wraps (or grows). Nothing is allocated per frame; the
 * ring starts at 2 s and doubles when an agent runs further ahead, up to `maxQueueMs`.
 */
export class PlayoutBuffer implements AudioSource, AudioSink {
  readonly sampleRate: number;
  readonly frameSamples: number;
  /** Grows on demand (doubling) up to #maxSamples, so a quiet call holds a small ring. */
  #ring: Int16Array;
  readonly #maxSamples: number;
  #writePos = 0;
  #readPos = 0;
  /** Whether audio arrived since the last pull: a partial frame is held back while it does. */
  #pushedSinceRead = false;
  readonly #marks: { pos: number; name: string }[] = [];
  readonly #onMark: ((name: string, outcome: MarkOutcome) => void) | undefined;
  readonly #frame: AudioFrame;
  #playedSamples = 0;
  readonly stats: PlayoutStats = { framesPlayed: 0, underruns: 0, overflowSamples: 0, flushedSamples: 0 };

  constructor(options: PlayoutBufferOptions = {}) {
    this.sampleRate = options.sampleRate ?? 8000;
    this.frameSamples = Math.round((this.sampleRate * (options.frameMs ?? 20)) / 1000);
    const maxSamples = Math.ceil((this.sampleRate * (options.maxQueueMs ?? 60_000)) / 1000);
    this.#maxSamples = Math.max(maxSamples, this.frameSamples);
    // Most agents stay a second or two ahead of real time; bursts grow the ring as they come.
    this.#ring = new Int16Array(Math.min(this.#maxSamples, Math.max(this.frameSamples, Math.ceil(this.sampleRate * INITIAL_QUEUE_S))));
    this.#onMark = options.onMark;
    this.#frame = { pcm: new Int16Array(this.frameSamples), sampleRate: this.sampleRate, timestamp: 0, receivedAt: 0 };
  }

  /** Audio queued and not yet played, in milliseconds. */
  get bufferedMs(): number {
    return ((this.#writePos - this.#readPos) * 1000) / this.sampleRate;
  }

  /** Queues samples (copied). When full, the oldest queued audio is dropped to make room. */
  push(pcm: Int16Array): void {
    this.#grow(this.#writePos - this.#readPos + pcm.length);
    const ring = this.#ring;
    let src = pcm;
    if (src.length > ring.length) {
      this.#drop(src.length - ring.length);
      src = src.subarray(src.length - ring.length);
    }
    const overflow = this.#writePos - this.#readPos + src.length - ring.length;
    if (overflow > 0) this.#dropOldest(overflow);
    const at = this.#writePos % ring.length;
    const first = Math.min(src.length, ring.length - at);
    ring.set(src.subarray(0, first), at);
    if (first < src.length) ring.set(src.subarray(first), 0);
    this.#writePos += src.length;
    this.#pushedSinceRead = true;
  }

  writeFrame(frame: AudioFrame): void {
    if (frame.sampleRate !== this.sampleRate) throw new RangeError(`playout buffer at ${this.sampleRate} Hz got ${frame.sampleRate} Hz`);
    this.push(frame.pcm);
  }

  /** Places a mark after the audio queued so far; `onMark` fires once that audio has played. */
  mark(name: string): void {
    this.#marks.push({ pos: this.#writePos, name });
  }

  /**
   * Pulls one frame for the pacer, as an {@link AudioFrame} (reused by the next call) whose
   * timestamp counts the samples played. See {@link PlayoutBuffer.read} for the rules.
   */
  readFrame(now: number): AudioFrame {
    const out = this.#frame;
    this.read(out.pcm);
    out.timestamp = this.#playedSamples >>> 0;
    out.receivedAt = now;
    this.#playedSamples += out.pcm.length;
    return out;
  }

  /**
   * Fills `out` (normally one frame) and always returns its full length: the agent's stream never
   * ends, it only goes quiet, and an empty queue plays silence. A trailing partial frame is held
   * back while audio keeps arriving, and played padded with silence once the agent has gone
   * quiet for a tick.
   */
  read(out: Int16Array): number {
    const available = this.#writePos - this.#readPos;
    const take = available >= out.length || !this.#pushedSinceRead ? Math.min(available, out.length) : 0;
    if (take > 0) this.#copyOut(out, take);
    if (take < out.length) out.fill(0, take);
    if (take === 0) this.stats.underruns++;
    else this.stats.framesPlayed++;
    this.#pushedSinceRead = false;
    this.#fireMarks('played');
    return out.length;
  }

  /** Capacity in samples now (it grows up to the configured maximum). */
  get capacitySamples(): number {
    return this.#ring.length;
  }

  /**
   * Makes room for `needed` queued samples, doubling the ring up to the maximum. Positions are
   * absolute, so each queued sample moves from `pos % old` to `pos % new`.
   */
  #grow(needed: number): void {
    const old = this.#ring;
    if (needed <= old.length || old.length >= this.#maxSamples) return;
    let size = old.length;
    while (size < needed && size < this.#maxSamples) size = Math.min(size * 2, this.#maxSamples);
    const ring = new Int16Array(size);
    for (let pos = this.#readPos; pos < this.#writePos; pos++) ring[pos % size] = old[pos % old.length]!;
    this.#ring = ring;
  }

  /** Drops all queued audio at once (barge-in); pending marks fire as 'flushed'. */
  flush(): void {
    this.stats.flushedSamples += this.#writePos - this.#readPos;
    this.#readPos = this.#writePos;
    for (const m of this.#marks.splice(0)) this.#onMark?.(m.name, 'flushed');
  }

  describe(): string {
    return `playout(${this.sampleRate} Hz, ${this.bufferedMs.toFixed(0)} ms queued)`;
  }

  close(): void {
    this.flush();
  }

  #copyOut(dst: Int16Array, n: number): void {
    const ring = this.#ring;
    const at = this.#readPos % ring.length;
    const first = Math.min(n, ring.length - at);
    dst.set(ring.subarray(at, at + first), 0);
    if (first < n) dst.set(ring.subarray(0, n - first), first);
    this.#readPos += n;
  }

  #dropOldest(n: number): void {
    this.stats.overflowSamples += n;
    this.#readPos += n;
    this.#fireMarks('overflowed');
  }

  /** Drops samples of a push that alone exceeds the capacity, before they are ever queued. */
  #drop(n: number): void {
    this.#dropOldest(this.#writePos - this.#readPos);
    this.stats.overflowSamples += n;
  }

  #fireMarks(outcome: MarkOutcome): void {
    while (this.#marks.length > 0 && (this.#marks[0]?.pos ?? Infinity) <= this.#readPos) {
      const m = this.#marks.shift();
      if (m) this.#onMark?.(m.name, outcome);
    }
  }
}
