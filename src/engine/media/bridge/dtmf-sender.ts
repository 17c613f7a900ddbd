/** @module Sends RFC 4733 telephone-events on one leg, paced at the packet time, digit after digit. */
import type { Clock } from '../../../common/clock.js';
import { DTMF_EVENTS, telephoneEventFrames, type TelephoneEventFrame } from '../dtmf/rfc4733.js';
import { RTP_HEADER_SIZE, writeRtpHeader } from '../rtp/packet.js';
import type { RtpSession } from '../rtp/rtp-session.js';
import { FramePacer } from './frame-pacer.js';

/** Source keys of generated DTMF for the sequencer: one per digit, below the music source. */
const FIRST_DTMF_SOURCE = -2;
/** Silence between digits, in packet times (40 ms at 20 ms ptime). */
const INTER_DIGIT_FRAMES = 2;

/** Options of a {@link DtmfSender}. */
export interface DtmfSenderOptions {
  clock: Clock;
  payloadType: number;
  ptimeMs?: number;
  clockRate?: number;
}

/**
 * Queues digits and plays each as an RFC 4733 event: a start packet with the marker bit, updates
 * every packet time, and three end packets (§2.5.1). Each digit is its own source for the
 * sequencer, so its timestamp is placed at the time it starts rather than after the previous
 * digit's frozen timestamp.
 */
export class DtmfSender {
  readonly #pacer: FramePacer;
  readonly #payloadType: number;
  readonly #ptimeMs: number;
  readonly #clockRate: number;
  readonly #queue: { digit: number; durationMs: number }[] = [];
  #session: RtpSession;
  #frames: TelephoneEventFrame[] = [];
  #frameIndex = 0;
  #gap = 0;
  #seq = 0;
  #digitCount = 0;
  /** Called with true when sending starts and false when the queue is empty, to pause relayed audio. */
  onActiveChange: (active: boolean) => void = () => undefined;

  constructor(session: RtpSession, options: DtmfSenderOptions) {
    this.#session = session;
    this.#payloadType = options.payloadType;
    this.#ptimeMs = options.ptimeMs ?? 20;
    this.#clockRate = options.clockRate ?? 8000;
    this.#pacer = new FramePacer(options.clock, this.#ptimeMs, () => this.#onFrame());
  }

  get active(): boolean {
    return this.#pacer.running;
  }

  /** Queues `digits` (0-9, *, #, A-D); returns the characters it could not send. */
  send(digits: string, durationMs = 100): string {
    let rejected = '';
    for (const ch of digits.toUpperCase()) {
      const event = DTMF_EVENTS.indexOf(ch);
      if (event < 0) rejected += ch;
      else this.#queue.push({ digit: event, durationMs });
    }
    if (!this.#pacer.running && this.#queue.length > 0) {
      this.onActiveChange(true);
      this.#pacer.start();
    }
    return rejected;
  }

  /** Drops queued digits and stops at once (an event cut short has no end packets). */
  stop(): void {
    const wasActive = this.#pacer.running;
    this.#pacer.stop();
    this.#queue.length = 0;
    this.#frames = [];
    if (wasActive) this.onActiveChange(false);
  }

  #onFrame(): void {
    if (this.#frameIndex < this.#frames.length) {
      this.#sendFrame(this.#frames[this.#frameIndex]!, this.#frameIndex === 0);
      this.#frameIndex++;
      if (this.#frameIndex === this.#frames.length) this.#gap = INTER_DIGIT_FRAMES;
      return;
    }
    if (this.#gap > 0) {
      this.#gap--;
      return;
    }
    const next = this.#queue.shift();
    if (!next) {
      this.#pacer.stop();
      this.onActiveChange(false);
      return;
    }
    this.#frames = telephoneEventFrames(next.digit, next.durationMs, { clockRate: this.#clockRate, ptimeMs: this.#ptimeMs });
    this.#frameIndex = 0;
    this.#digitCount++;
    this.#onFrame();
  }

  #sendFrame(frame: TelephoneEventFrame, first: boolean): void {
    const packet = Buffer.allocUnsafe(RTP_HEADER_SIZE + frame.payload.length);
    // All packets of one event carry its start timestamp (RFC 4733 §2.5.1.1); 0 here, mapped by the sequencer.
    writeRtpHeader(packet, this.#payloadType, this.#seq++, 0, 0, frame.marker);
    frame.payload.copy(packet, RTP_HEADER_SIZE);
    this.#session.send(packet, FIRST_DTMF_SOURCE - this.#digitCount, first);
  }
}
