/** @module Probation of a new RTP source before a latched session follows it (RFC 3550 A.1, RFC 4961). */

/**
 * Packets in sequence a new source must send before it is believed: RFC 3550 A.1 MIN_SEQUENTIAL.
 * One stray, spoofed or random datagram never moves a latched session; a real source that moved
 * (a transfer behind the carrier, a NAT rebinding) loses one packet.
 */
export const LATCH_PROBATION = 2;

/**
 * The source a latched {@link RtpSession} would move to, if it keeps sending. A run counts
 * packets from one transport address with one SSRC whose sequence numbers follow each other;
 * anything else starts a new run.
 */
export class LatchCandidate {
  #address = '';
  #port = 0;
  #ssrc = 0;
  #seq = 0;
  #run = 0;

  /** Feeds one packet from a source other than the latched one; true once its run reaches {@link LATCH_PROBATION}. */
  observe(address: string, port: number, ssrc: number, seq: number): boolean {
    const follows = this.#run > 0 && port === this.#port && ssrc === this.#ssrc && seq === ((this.#seq + 1) & 0xffff) && address === this.#address;
    this.#run = follows ? this.#run + 1 : 1;
    this.#address = address;
    this.#port = port;
    this.#ssrc = ssrc;
    this.#seq = seq;
    return this.#run >= LATCH_PROBATION;
  }

  /** Forgets the run (after a re-latch, or when signalling named a new address). */
  reset(): void {
    this.#run = 0;
  }
}
