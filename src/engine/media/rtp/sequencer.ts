/** @module Outgoing SSRC, sequence and timestamp continuity across source switches (RFC 3550 §5.1, §8.2). */
import { randomInt } from 'node:crypto';
import { setRtpMarker, setRtpSeqTsSsrc, rtpSequenceNumber, rtpTimestamp } from './packet.js';

/** Options of a {@link RtpSequencer}. */
export interface RtpSequencerOptions {
  /** SSRC written into every packet; random when absent (RFC 3550 §8.1). */
  ssrc?: number;
  /** RTP clock rate of the outgoing stream, to turn elapsed time into timestamp units. */
  clockRate: number;
  /** Timestamp advance of one packet, used when the gap since the last packet is shorter. */
  samplesPerPacket: number;
}

/**
 * Rewrites the header of every packet sent to one leg so that the far end sees one continuous
 * stream: one SSRC, sequence numbers that step by one, and timestamps that keep advancing with
 * wall time, whichever source (the other leg, a swapped agent, hold music, DTMF) produced it.
 *
 * Within a source it keeps that source's own sequence and timestamp deltas (so loss and
 * reordering stay visible to the receiver's jitter buffer); at a switch it recomputes the
 * offsets so the new source continues where the old one stopped and sets the marker bit, which
 * RFC 3551 §4.1 uses for the first packet of a talkspurt.
 */
export class RtpSequencer {
  readonly ssrc: number;
  readonly #clockRate: number;
  readonly #samplesPerPacket: number;
  #source = -1;
  #seqOffset = 0;
  #tsOffset = 0;
  #lastSeq: number;
  #lastTs: number;
  #lastAtMs = -1;
  #switches = 0;

  constructor(options: RtpSequencerOptions) {
    this.ssrc = (options.ssrc ?? randomInt(1, 0xffffffff)) >>> 0;
    this.#clockRate = options.clockRate;
    this.#samplesPerPacket = options.samplesPerPacket;
    // RFC 3550 §5.1: initial sequence number and timestamp SHOULD be random.
    this.#lastSeq = randomInt(0, 0x10000);
    this.#lastTs = randomInt(0, 0xffffffff);
  }

  /** How many times the source changed (the first source included). */
  get switches(): number {
    return this.#switches;
  }

  /**
   * Rewrites `buf` in place for sending. `source` identifies the producer (the incoming SSRC, or
   * a negative number for locally generated audio); `nowMs` is monotonic time. `advancesClock`
   * is false for packets whose timestamp does not track time, such as the RFC 4733 updates of
   * one event, which all carry the event's start timestamp (RFC 4733 §2.5.1.1).
   */
  rewrite(buf: Buffer, source: number, nowMs: number, advancesClock = true): void {
    const inSeq = rtpSequenceNumber(buf);
    const inTs = rtpTimestamp(buf);
    if (source !== this.#source) this.#switchTo(source, inSeq, inTs, nowMs, buf);
    const seq = (inSeq + this.#seqOffset) & 0xffff;
    const ts = (inTs + this.#tsOffset) >>> 0;
    this.#advance(seq, ts, nowMs, advancesClock);
    setRtpSeqTsSsrc(buf, seq, ts, this.ssrc);
  }

  /**
   * The offsets {@link rewrite} adds to packets of `source`, while it is the current source (so
   * that packets can be rewritten elsewhere, by the media I/O's relay); null for any other.
   */
  offsetsFor(source: number): { sequence: number; timestamp: number } | null {
    return source === this.#source ? { sequence: this.#seqOffset, timestamp: this.#tsOffset } : null;
  }

  /** Accounts for a packet rewritten elsewhere (with {@link offsetsFor}'s offsets) and sent as `seq`, `ts`. */
  noteRelayed(seq: number, ts: number, nowMs: number): void {
    this.#advance(seq, ts, nowMs, true);
  }

  #advance(seq: number, ts: number, nowMs: number, advancesClock: boolean): void {
    // Only forward movement updates the reference, so a late packet does not pull it back.
    if (((seq - this.#lastSeq) & 0xffff) < 0x8000) {
      this.#lastSeq = seq;
      if (advancesClock) {
        this.#lastTs = ts;
        this.#lastAtMs = nowMs;
      }
    }
  }

  #switchTo(source: number, inSeq: number, inTs: number, nowMs: number, buf: Buffer): void {
    const elapsedMs = this.#lastAtMs < 0 ? 0 : nowMs - this.#lastAtMs;
    // RFC 3550 §5.1: the timestamp reflects the sampling instant, so the gap in time becomes a
    // gap in timestamp; never less than one packet, so timestamps stay strictly increasing.
    const gap = Math.max(this.#samplesPerPacket, Math.round((elapsedMs * this.#clockRate) / 1000));
    this.#seqOffset = (this.#lastSeq + 1 - inSeq) & 0xffff;
    this.#tsOffset = (this.#lastTs + (this.#lastAtMs < 0 ? 0 : gap) - inTs) >>> 0;
    this.#source = source;
    this.#switches++;
    setRtpMarker(buf, true);
  }
}
