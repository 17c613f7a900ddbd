/** @module SRTP packet index estimation (RFC 3711 §3.3.1, Appendix A) and the replay list (§3.3.2), plus the bounded per-SSRC table that holds them. */

/** Replay list size: the RFC's minimum, and what SDES peers expect (RFC 3711 §3.3.2). */
export const REPLAY_WINDOW = 64;

const SEQ_MODULUS = 0x10000;
const HALF = 0x8000;

/**
 * The index i = 2^16 * v + SEQ of a packet, where v is the receiver's guess of its ROC given the
 * highest index so far (2^16 * ROC + s_l), RFC 3711 Appendix A:
 *
 *   if (s_l < 2^15)  v = (SEQ - s_l > 2^15) ? ROC - 1 : ROC
 *   else             v = (s_l - 2^15 > SEQ) ? ROC + 1 : ROC
 *
 * Negative when the guess is ROC - 1 while ROC is 0: a packet from before the first one, which the
 * caller treats as too old.
 */
export function estimateIndex(highest: number, seq: number): number {
  const roc = Math.floor(highest / SEQ_MODULUS);
  const sL = highest % SEQ_MODULUS;
  let v = roc;
  if (sL < HALF) {
    if (seq - sL > HALF) v = roc - 1;
  } else if (sL - HALF > seq) {
    v = roc + 1;
  }
  return v * SEQ_MODULUS + seq;
}

/**
 * The replay list of one source (RFC 3711 §3.3.2): the highest authenticated index and which of
 * the REPLAY_WINDOW indices up to it have been received. Slot `i mod 64` remembers the last index
 * accepted there, so an index within the window was seen exactly when its slot holds it; slots
 * left over from before a jump hold indices below the window and match nothing in it.
 */
export class ReplayWindow {
  #highest = -1;
  readonly #seen = new Float64Array(REPLAY_WINDOW).fill(-1);

  /** The highest accepted index, -1 before the first. */
  get highest(): number {
    return this.#highest;
  }

  /** false when `index` was already accepted or is older than the window. Changes nothing. */
  check(index: number): boolean {
    if (index < 0) return false;
    const delta = this.#highest - index;
    if (delta < 0) return true;
    if (delta >= REPLAY_WINDOW) return false;
    return this.#seen[index % REPLAY_WINDOW] !== index;
  }

  /** Records an authenticated `index` (call only after check() and the tag passed). */
  accept(index: number): void {
    this.#seen[index % REPLAY_WINDOW] = index;
    if (index > this.#highest) this.#highest = index;
  }
}

/**
 * Per-SSRC state, at most `capacity` sources, evicting the least recently used: a peer that cycles
 * SSRCs cannot grow it, and only authenticated packets add or refresh an entry.
 */
export class SsrcTable<T> {
  readonly #entries = new Map<number, T>();
  readonly #capacity: number;
  /** The source refreshed last: the common case (one source) then costs no Map reordering. */
  #last = -1;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  get(ssrc: number): T | undefined {
    return this.#entries.get(ssrc);
  }

  /** Adds `ssrc` or refreshes it as the most recently used; `value` is its entry (the one get() returned, or a new one). */
  use(ssrc: number, value: T): void {
    if (ssrc === this.#last) return;
    // Map keeps insertion order: delete and set moves the entry to the young end.
    if (!this.#entries.delete(ssrc) && this.#entries.size >= this.#capacity) {
      this.#entries.delete(this.#entries.keys().next().value!);
    }
    this.#entries.set(ssrc, value);
    this.#last = ssrc;
  }
}
