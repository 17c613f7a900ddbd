/** @module Receiver-side statistics of one RTP source: RFC 3550 A.1 sequence, A.3 loss, A.8 jitter. */

const RTP_SEQ_MOD = 1 << 16;
/** RFC 3550 A.1: a jump larger than this is a restart or a misbehaving sender. */
const MAX_DROPOUT = 3000;
const MAX_MISORDER = 100;
/** RFC 3550 A.1: packets in sequence before a source is valid. */
const MIN_SEQUENTIAL = 2;

/** What one receiver report block says about a source (RFC 3550 §6.4.1). */
export interface ReportBlockValues {
  ssrc: number;
  /** Fraction lost since the previous report, as the 8-bit fixed point number of §6.4.1. */
  fractionLost: number;
  /** Cumulative packets lost, clamped to the signed 24-bit field. */
  cumulativeLost: number;
  extendedHighestSeq: number;
  /** Interarrival jitter in timestamp units (A.8). */
  jitter: number;
}

/** A snapshot for call detail records and metrics. */
export interface ReceptionSnapshot {
  ssrc: number;
  packetsReceived: number;
  packetsExpected: number;
  packetsLost: number;
  /** Interarrival jitter in milliseconds. */
  jitterMs: number;
  /** The largest value the jitter estimate reached, and its mean over every packet that updated it (call quality). */
  maxJitterMs: number;
  meanJitterMs: number;
}

/**
 * Sequence, loss and jitter bookkeeping for one source, following RFC 3550 Appendix A.1, A.3 and
 * A.8 closely (variable names included), so reviewers can compare line by line.
 */
export class ReceptionStats {
  ssrc = 0;
  readonly #clockRate: number;
  #maxSeq = 0;
  #cycles = 0;
  #baseSeq = 0;
  #badSeq = RTP_SEQ_MOD + 1;
  #probation = MIN_SEQUENTIAL;
  #received = 0;
  #expectedPrior = 0;
  #receivedPrior = 0;
  #transit = 0;
  #jitter = 0;
  /** Call-quality figures over the source's life: the estimate's maximum, and its sum over its updates. */
  #maxJitter = 0;
  #jitterSum = 0;
  #jitterUpdates = 0;
  #started = false;

  constructor(clockRate: number) {
    this.#clockRate = clockRate;
  }

  /** Feeds one packet: `arrivalMs` is monotonic time of arrival. False when A.1 rejects it. */
  update(ssrc: number, seq: number, rtpTs: number, arrivalMs: number): boolean {
    if (!this.#started || ssrc !== this.ssrc) this.#init(ssrc, seq);
    if (!this.#updateSeq(seq)) return false;
    // A.8: transit = arrival - timestamp, both in timestamp units; J += (|D| - J) / 16.
    const arrival = Math.round((arrivalMs * this.#clockRate) / 1000);
    const transit = (arrival - rtpTs) | 0;
    if (this.#received > 1) {
      const d = Math.abs((transit - this.#transit) | 0);
      this.#jitter += (d - this.#jitter) / 16;
      if (this.#jitter > this.#maxJitter) this.#maxJitter = this.#jitter;
      this.#jitterSum += this.#jitter;
      this.#jitterUpdates++;
    }
    this.#transit = transit;
    return true;
  }

  #init(ssrc: number, seq: number): void {
    this.ssrc = ssrc;
    this.#started = true;
    this.#initSeq(seq);
    this.#maxSeq = seq - 1;
    this.#probation = MIN_SEQUENTIAL;
    this.#jitter = 0;
  }

  #initSeq(seq: number): void {
    this.#baseSeq = seq;
    this.#maxSeq = seq;
    this.#badSeq = RTP_SEQ_MOD + 1;
    this.#cycles = 0;
    this.#received = 0;
    this.#receivedPrior = 0;
    this.#expectedPrior = 0;
  }

  /** RFC 3550 A.1 update_seq(), returning whether the packet counts. */
  #updateSeq(seq: number): boolean {
    const udelta = (seq - this.#maxSeq + RTP_SEQ_MOD) % RTP_SEQ_MOD;
    if (this.#probation > 0) {
      if (seq === (this.#maxSeq + 1) % RTP_SEQ_MOD) {
        this.#probation--;
        this.#maxSeq = seq;
        if (this.#probation === 0) {
          this.#initSeq(seq);
          this.#received++;
          return true;
        }
      } else {
        this.#probation = MIN_SEQUENTIAL - 1;
        this.#maxSeq = seq;
      }
      return false;
    }
    if (udelta < MAX_DROPOUT) {
      if (seq < this.#maxSeq) this.#cycles += RTP_SEQ_MOD;
      this.#maxSeq = seq;
    } else if (udelta <= RTP_SEQ_MOD - MAX_MISORDER) {
      if (seq === this.#badSeq) {
        // Two sequential packets after a big jump: the sender restarted; resync.
        this.#initSeq(seq);
      } else {
        this.#badSeq = (seq + 1) & (RTP_SEQ_MOD - 1);
        return false;
      }
    }
    // Otherwise a duplicate or reordered packet: counted, as A.1 does.
    this.#received++;
    return true;
  }

  get extendedMax(): number {
    return this.#cycles + this.#maxSeq;
  }

  get expected(): number {
    return this.#received === 0 ? 0 : this.extendedMax - this.#baseSeq + 1;
  }

  /** A.3 cumulative loss; negative when duplicates outnumber losses, as the RFC allows. */
  get lost(): number {
    return this.expected - this.#received;
  }

  /** Builds the next report block and starts a new interval for the fraction lost (A.3). */
  reportBlock(): ReportBlockValues {
    const expected = this.expected;
    const expectedInterval = expected - this.#expectedPrior;
    const receivedInterval = this.#received - this.#receivedPrior;
    this.#expectedPrior = expected;
    this.#receivedPrior = this.#received;
    const lostInterval = expectedInterval - receivedInterval;
    const fractionLost = expectedInterval === 0 || lostInterval <= 0 ? 0 : Math.floor((lostInterval << 8) / expectedInterval);
    return {
      ssrc: this.ssrc,
      fractionLost,
      cumulativeLost: Math.max(-0x800000, Math.min(0x7fffff, this.lost)),
      extendedHighestSeq: this.extendedMax >>> 0,
      jitter: Math.floor(this.#jitter),
    };
  }

  snapshot(): ReceptionSnapshot {
    return {
      ssrc: this.ssrc,
      packetsReceived: this.#received,
      packetsExpected: this.expected,
      packetsLost: Math.max(0, this.lost),
      jitterMs: (this.#jitter * 1000) / this.#clockRate,
      maxJitterMs: (this.#maxJitter * 1000) / this.#clockRate,
      meanJitterMs: this.#jitterUpdates === 0 ? 0 : (this.#jitterSum * 1000) / this.#jitterUpdates / this.#clockRate,
    };
  }
}
