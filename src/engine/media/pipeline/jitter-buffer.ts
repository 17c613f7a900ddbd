/** @module Jitter buffer for audio taps: reorders frames by RTP timestamp and conceals short losses. */
import type { AudioFrame } from './audio-frame.js';
import { AudioStage, type AudioSink } from './audio-stage.js';

/** Options of {@link TapJitterBuffer}. */
export interface TapJitterBufferOptions {
  /** Frames held back for reordering: the added delay is depth × frame length. Default 3 (60 ms). */
  depth?: number;
  /** Lost frames concealed by a fading repeat of the last frame; longer gaps get silence. Default 5. */
  maxConcealFrames?: number;
  /**
   * A timestamp jump larger than this (in ms) is a new timing base (source change, RFC 3550
   * §5.1 random start, or a silence-suppressed pause), not loss: the buffer resynchronises
   * without filling it. Default 1000 ms.
   */
  resyncMs?: number;
}

/** Counters for call detail and metrics. */
export interface JitterStats {
  emitted: number;
  concealed: number;
  /** Frames that arrived after their slot had been played or concealed. */
  late: number;
  duplicates: number;
  resyncs: number;
}

interface Slot {
  used: boolean;
  timestamp: number;
  receivedAt: number;
  sampleRate: number;
  pcm: Int16Array;
  length: number;
}

/** Fade per concealed frame: each repeat is 6 dB quieter than the one before. */
const CONCEAL_GAIN = 0.5;

/** Signed difference a − b of two RTP timestamps, modulo 2^32 (RFC 3550 §5.1 wraparound). */
function tsDiff(a: number, b: number): number {
  return (a - b) | 0;
}

/**
 * Sits on a tap (never on the passthrough relay), so recording, VAD and agents see audio in
 * order and without holes. Frames are ordered by RTP timestamp, which for audio advances by the
 * samples in each packet (RFC 3550 §5.1, RFC 3551 §4.1), so a gap in timestamps is exactly the
 * audio lost, even where sequence numbers are not carried in the frame. Frames are copied into a small pool of slots on arrival; the frame
 * handed on is reused between calls, as the {@link AudioSink} contract allows.
 */
export class TapJitterBuffer extends AudioStage {
  readonly stats: JitterStats = { emitted: 0, concealed: 0, late: 0, duplicates: 0, resyncs: 0 };
  readonly #depth: number;
  readonly #maxConceal: number;
  readonly #resyncMs: number;
  readonly #slots: Slot[];
  #held = 0;
  #expected: number | undefined;
  /** Copy of the last frame played, for concealment (its slot is reused at once). */
  #lastPcm = new Int16Array(160);
  #lastLength = 0;
  #concealRun = 0;
  readonly #out: AudioFrame = { pcm: new Int16Array(0), sampleRate: 8000, timestamp: 0, receivedAt: 0 };
  #outBuf = new Int16Array(160);

  constructor(next: AudioSink, options: TapJitterBufferOptions = {}) {
    super(next);
    this.#depth = options.depth ?? 3;
    this.#maxConceal = options.maxConcealFrames ?? 5;
    this.#resyncMs = options.resyncMs ?? 1000;
    this.#slots = Array.from({ length: this.#depth + 2 }, () => ({
      used: false, timestamp: 0, receivedAt: 0, sampleRate: 8000, pcm: new Int16Array(160), length: 0,
    }));
  }

  writeFrame(frame: AudioFrame): void {
    if (this.#expected !== undefined && tsDiff(frame.timestamp, this.#expected) < 0) {
      const behindMs = (-tsDiff(frame.timestamp, this.#expected) * 1000) / frame.sampleRate;
      if (behindMs <= this.#resyncMs) {
        this.stats.late++;
        return;
      }
      this.#resync(frame.timestamp);
    }
    if (this.#slots.some((s) => s.used && s.timestamp === frame.timestamp)) {
      this.stats.duplicates++;
      return;
    }
    this.#store(frame);
    while (this.#held > this.#depth) this.#releaseOne();
  }

  /** Plays out everything held, concealing gaps between held frames (end of call, hold). */
  drain(): void {
    while (this.#held > 0) this.#releaseOne();
  }

  protected describeSelf(): string {
    return `jitter(depth ${this.#depth})`;
  }

  protected override closeSelf(): void {
    this.drain();
  }

  #store(frame: AudioFrame): void {
    const slot = this.#slots.find((s) => !s.used);
    if (!slot) throw new Error('jitter buffer slot pool exhausted'); // held ≤ depth + 1 by construction
    if (slot.pcm.length < frame.pcm.length) slot.pcm = new Int16Array(frame.pcm.length);
    slot.pcm.set(frame.pcm);
    slot.length = frame.pcm.length;
    slot.timestamp = frame.timestamp;
    slot.receivedAt = frame.receivedAt;
    slot.sampleRate = frame.sampleRate;
    slot.used = true;
    this.#held++;
  }

  #oldest(): Slot | undefined {
    let best: Slot | undefined;
    for (const s of this.#slots) if (s.used && (!best || tsDiff(s.timestamp, best.timestamp) < 0)) best = s;
    return best;
  }

  #releaseOne(): void {
    const oldest = this.#oldest();
    if (!oldest) return;
    this.#expected ??= oldest.timestamp;
    const gap = tsDiff(oldest.timestamp, this.#expected);
    if ((gap * 1000) / oldest.sampleRate > this.#resyncMs) this.#resync(oldest.timestamp);
    else if (gap > 0 && this.#lastLength > 0) return this.#conceal(oldest);
    this.#emit(oldest);
  }

  #resync(timestamp: number): void {
    this.stats.resyncs++;
    this.#expected = timestamp;
    this.#concealRun = 0;
  }

  #emit(slot: Slot): void {
    slot.used = false;
    this.#held--;
    this.#concealRun = 0;
    if (this.#lastPcm.length < slot.length) this.#lastPcm = new Int16Array(slot.length);
    this.#lastPcm.set(slot.pcm.subarray(0, slot.length));
    this.#lastLength = slot.length;
    this.#expected = (slot.timestamp + slot.length) >>> 0;
    this.#send(slot.pcm.subarray(0, slot.length), slot, slot.timestamp);
    this.stats.emitted++;
  }

  /** Fills one missing frame with the last frame, faded, so a lost packet is not a click. */
  #conceal(next: Slot): void {
    const last = this.#lastPcm;
    const n = Math.min(this.#lastLength, tsDiff(next.timestamp, this.#expected ?? next.timestamp));
    if (this.#outBuf.length < n) this.#outBuf = new Int16Array(n);
    const buf = this.#outBuf.subarray(0, n);
    this.#concealRun++;
    if (this.#concealRun > this.#maxConceal) buf.fill(0);
    else {
      const from = CONCEAL_GAIN ** (this.#concealRun - 1);
      const to = CONCEAL_GAIN ** this.#concealRun;
      for (let i = 0; i < n; i++) buf[i] = Math.round((last[i] ?? 0) * (from + ((to - from) * i) / n));
    }
    const timestamp = this.#expected ?? next.timestamp;
    this.#expected = (timestamp + n) >>> 0;
    this.#send(buf, next, timestamp);
    this.stats.concealed++;
  }

  #send(pcm: Int16Array, like: Slot, timestamp: number): void {
    const out = this.#out;
    out.pcm = pcm;
    out.sampleRate = like.sampleRate;
    out.timestamp = timestamp;
    out.receivedAt = like.receivedAt;
    this.next.writeFrame(out);
  }
}
