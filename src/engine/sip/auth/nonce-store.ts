/**
 * @module The UAS's record of the nonces it issued (RFC 7616 §3.3, §5.12; RFC 2617 §3.2.2): each
 * nonce with the highest nonce count (`nc`) accepted for it, so a captured Authorization cannot
 * be replayed. Bounded: least recently used entries go first, expired ones are pruned lazily.
 */
import type { Clock } from '../../../common/clock.js';

/** Options of a {@link NonceStore}. */
export interface NonceStoreOptions {
  /** Nonces remembered at most; beyond it the least recently used one is forgotten. */
  maxEntries: number;
  /** A nonce older than this is forgotten (the verifier answers it `stale` anyway). */
  ttlMs: number;
  clock: Clock;
}

/**
 * The outcome of using a nonce: `unknown` when it was never issued here or was forgotten (expired
 * or evicted), `replayed` when its nonce count does not exceed the last one accepted.
 */
export type NonceUse = 'ok' | 'unknown' | 'replayed';

interface Entry {
  issuedAt: number;
  /** Highest nonce count accepted; 0 before the first use. */
  lastNc: number;
}

/** Issued nonces in least-recently-used order (a Map keeps insertion order; a use re-inserts). */
export class NonceStore {
  readonly #options: NonceStoreOptions;
  readonly #entries = new Map<string, Entry>();

  constructor(options: NonceStoreOptions) {
    if (options.maxEntries < 1) throw new RangeError('NonceStore needs room for at least one nonce');
    this.#options = options;
  }

  /** Nonces remembered now (a metric, and the memory bound's test). */
  get size(): number {
    return this.#entries.size;
  }

  /** Remembers a nonce just issued in a challenge. */
  add(nonce: string): void {
    const now = this.#options.clock.now();
    this.#prune(now);
    while (this.#entries.size >= this.#options.maxEntries) {
      const oldest = this.#entries.keys().next();
      if (oldest.done) break;
      this.#entries.delete(oldest.value);
    }
    this.#entries.set(nonce, { issuedAt: now, lastNc: 0 });
  }

  /**
   * Accepts one use of `nonce` with nonce count `nc`. RFC 7616 §3.4: with qop the count must
   * exceed the last one accepted for the nonce; without qop (RFC 2069 compatibility) there is no
   * count, so pass 1 and the nonce is single-use.
   */
  use(nonce: string, nc: number): NonceUse {
    const entry = this.#entries.get(nonce);
    if (!entry || this.#options.clock.now() - entry.issuedAt > this.#options.ttlMs) {
      this.#entries.delete(nonce);
      return 'unknown';
    }
    if (nc <= entry.lastNc) return 'replayed';
    entry.lastNc = nc;
    this.#entries.delete(nonce);
    this.#entries.set(nonce, entry);
    return 'ok';
  }

  /** Drops expired entries from the least recently used end until a live one is met. */
  #prune(now: number): void {
    for (const [nonce, entry] of this.#entries) {
      if (now - entry.issuedAt <= this.#options.ttlMs) break;
      this.#entries.delete(nonce);
    }
  }
}
