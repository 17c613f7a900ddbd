/**
 * @module Digits toward the remote party (docs/API.md "Digits toward the callee"): a string such as
 * `1w2#` played one 20 ms frame at a time by the carrier playout, as RFC 4733 events when the leg
 * negotiated telephone-event and as in-band tones (ITU-T Q.23) otherwise. `w` is a 500 ms pause.
 */
import { DTMF_EVENTS, dtmfTone, telephoneEventFrames } from '../../../media/index.js';

/** What one request may hold: keys, `w` pauses; at most 64 characters (docs/API.md "Digits toward the callee"). */
export const CALLEE_DIGITS_PATTERN = '^[0-9A-Da-d*#wW]{1,64}$';
const DIGITS = new RegExp(CALLEE_DIGITS_PATTERN);
export const isCalleeDigits = (digits: string): boolean => DIGITS.test(digits);

/** A `w` in the string. */
const PAUSE_MS = 500;
/** An RFC 4733 event's length, and the silence after it. */
const EVENT_MS = 100;
const EVENT_GAP_MS = 60;
const FRAME_MS = 20;
const FRAME_SAMPLES = 160;

/** One 20 ms frame of digits: PCM to send as audio (tones or silence), or a telephone-event payload. */
export type DigitFrame =
  | { kind: 'audio' }
  | { kind: 'event'; payload: Buffer; marker: boolean; first: boolean };

type Step =
  | { kind: 'pcm'; pcm: Int16Array; at: number }
  | { kind: 'events'; frames: { payload: Buffer; marker: boolean }[]; at: number }
  | { kind: 'silence'; frames: number };

interface Request {
  steps: Step[];
  onSent: () => void;
}

/** A queue of digit requests, played in order; each request's `onSent` runs after its last frame. */
export class CalleeDigits {
  readonly #queue: Request[] = [];

  /** Whether frames are waiting: the playout then takes them instead of agent audio. */
  get active(): boolean {
    return this.#queue.length > 0;
  }

  /** Queues `digits` (checked by {@link isCalleeDigits}); `events` picks RFC 4733 over tones. */
  enqueue(digits: string, events: boolean, onSent: () => void): void {
    const steps: Step[] = [];
    for (const ch of digits.toUpperCase()) {
      if (ch === 'W') steps.push({ kind: 'silence', frames: PAUSE_MS / FRAME_MS });
      else if (events) {
        steps.push({ kind: 'events', frames: telephoneEventFrames(DTMF_EVENTS.indexOf(ch), EVENT_MS), at: 0 });
        steps.push({ kind: 'silence', frames: EVENT_GAP_MS / FRAME_MS });
      } else steps.push({ kind: 'pcm', pcm: dtmfTone(ch), at: 0 });
    }
    this.#queue.push({ steps, onSent });
  }

  /** Drops everything queued without acknowledging it (the leg stopped). */
  clear(): void {
    this.#queue.length = 0;
  }

  /**
   * The next frame: audio written into `pcm` (tones or silence), or an event payload. Only called
   * while {@link active}.
   */
  next(pcm: Int16Array): DigitFrame {
    const request = this.#queue[0]!;
    const step = request.steps[0];
    let frame: DigitFrame;
    if (!step) frame = silence(pcm);
    else if (step.kind === 'silence') {
      frame = silence(pcm);
      if (--step.frames <= 0) request.steps.shift();
    } else if (step.kind === 'pcm') {
      const n = Math.min(FRAME_SAMPLES, step.pcm.length - step.at);
      pcm.set(step.pcm.subarray(step.at, step.at + n));
      pcm.fill(0, n);
      step.at += n;
      if (step.at >= step.pcm.length) request.steps.shift();
      frame = { kind: 'audio' };
    } else {
      const event = step.frames[step.at]!;
      frame = { kind: 'event', payload: event.payload, marker: event.marker, first: step.at === 0 };
      if (++step.at >= step.frames.length) request.steps.shift();
    }
    if (request.steps.length === 0) {
      this.#queue.shift();
      request.onSent();
    }
    return frame;
  }
}

function silence(pcm: Int16Array): DigitFrame {
  pcm.fill(0);
  return { kind: 'audio' };
}
