/** @module RFC 4733 telephone-event payload: parse, deduplicate on receipt, and generate for sending. */

/*
 * Telephone-event payload, RFC 4733 §2.3:
 *
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |     event     |E|R| volume    |          duration             |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *
 * E marks the end of the event; R is reserved; volume is -dBm0 (0-63); duration is in timestamp
 * units from the event's start, which is the packet's RTP timestamp and stays the same for every
 * packet of one event (§2.5.1.1).
 */

export const TELEPHONE_EVENT_SIZE = 4;
const END_MASK = 0x80;
const VOLUME_MASK = 0x3f;

/** Event codes 0-15 of RFC 4733 §3.2 as the characters they stand for. */
export const DTMF_EVENTS = '0123456789*#ABCD';

/** One decoded telephone-event payload. */
export interface TelephoneEvent {
  event: number;
  end: boolean;
  volume: number;
  duration: number;
}

/** Parses the payload at `offset`, or null when it is shorter than 4 octets. */
export function parseTelephoneEvent(buf: Buffer, offset = 0): TelephoneEvent | null {
  if (buf.length - offset < TELEPHONE_EVENT_SIZE) return null;
  return {
    event: buf[offset]!,
    end: (buf[offset + 1]! & END_MASK) !== 0,
    volume: buf[offset + 1]! & VOLUME_MASK,
    duration: buf.readUInt16BE(offset + 2),
  };
}

export function writeTelephoneEvent(out: Buffer, offset: number, ev: TelephoneEvent): void {
  out[offset] = ev.event;
  out[offset + 1] = (ev.end ? END_MASK : 0) | (ev.volume & VOLUME_MASK);
  out.writeUInt16BE(Math.min(0xffff, ev.duration), offset + 2);
}

/** The character for a DTMF event code, or null for other events (tones, flash). */
export function dtmfDigit(event: number): string | null {
  return DTMF_EVENTS[event] ?? null;
}

/**
 * Turns the packet stream of one source into digits, each reported once. RFC 4733 §2.5.1.4
 * repeats the end packet three times and §2.5.1.2 sends updates for a long event, all with the
 * same RTP timestamp, so an event is identified by its timestamp: it is reported at its first end
 * packet, or, when every end packet was lost, when a packet of the next event arrives.
 */
export class TelephoneEventReceiver {
  #currentTs = -1;
  #currentEvent = -1;
  #reported = false;
  #lastReportedTs = -1;

  /** Feeds one packet's payload; returns the events it completed (usually none or one). */
  receive(rtpTimestamp: number, payload: TelephoneEvent): readonly CompletedEvent[] {
    if (rtpTimestamp === this.#lastReportedTs) return NONE;
    const completed: CompletedEvent[] = [];
    if (rtpTimestamp !== this.#currentTs) {
      // A new event began: if the previous one never ended, its end packets were all lost.
      if (this.#currentTs !== -1 && !this.#reported) completed.push({ event: this.#currentEvent, duration: 0 });
      this.#currentTs = rtpTimestamp;
      this.#currentEvent = payload.event;
      this.#reported = false;
    }
    if (payload.end && !this.#reported) {
      this.#reported = true;
      this.#lastReportedTs = rtpTimestamp;
      completed.push({ event: payload.event, duration: payload.duration });
    }
    return completed;
  }
}

/** An event reported by {@link TelephoneEventReceiver}; duration 0 when its end was lost. */
export interface CompletedEvent {
  event: number;
  duration: number;
}

const NONE: readonly CompletedEvent[] = [];

/** One packet of an outgoing event: payload plus the marker bit (set on the first, §2.5.1.3). */
export interface TelephoneEventFrame {
  payload: Buffer;
  marker: boolean;
}

/**
 * The packets for one event, one per `ptimeMs`: a start packet with the marker bit, updates with
 * growing duration, and the end packet sent three times with the final duration (RFC 4733
 * §2.5.1.2-§2.5.1.4). All share the event's RTP timestamp, which the sender fixes.
 */
export function telephoneEventFrames(event: number, durationMs: number, options: { clockRate?: number; ptimeMs?: number; volume?: number } = {}): TelephoneEventFrame[] {
  const clockRate = options.clockRate ?? 8000;
  const ptimeMs = options.ptimeMs ?? 20;
  const volume = options.volume ?? 10;
  const step = (clockRate * ptimeMs) / 1000;
  const total = Math.max(step, Math.round((durationMs * clockRate) / 1000 / step) * step);
  const frames: TelephoneEventFrame[] = [];
  for (let duration = step; duration < total; duration += step) {
    frames.push(makeFrame(event, false, volume, duration, frames.length === 0));
  }
  for (let i = 0; i < 3; i++) frames.push(makeFrame(event, true, volume, total, frames.length === 0));
  return frames;
}

function makeFrame(event: number, end: boolean, volume: number, duration: number, marker: boolean): TelephoneEventFrame {
  const payload = Buffer.alloc(TELEPHONE_EVENT_SIZE);
  writeTelephoneEvent(payload, 0, { event, end, volume, duration });
  return { payload, marker };
}
