/** @module TokenBucketLimiter: per-source-IP admission for the transport layer (flood protection). */
import type { Clock } from '../../../common/clock.js';

export interface RateLimitOptions {
  /** Sustained messages per second per source IP. */
  perSecond: number;
  /** Bucket size: messages a source may send in a burst. */
  burst: number;
  /** Sources tracked at most; when exceeded, buckets idle long enough to be full are evicted. */
  maxSources?: number;
}

interface Bucket {
  tokens: number;
  last: number;
}

/**
 * One token bucket per source address, refilled continuously at `perSecond`. `admit` costs O(1);
 * memory is bounded by `maxSources` (default 100,000) through lazy eviction of full buckets.
 */
export class TokenBucketLimiter {
  readonly #options: Required<RateLimitOptions>;
  readonly #clock: Clock;
  readonly #buckets = new Map<string, Bucket>();

  constructor(options: RateLimitOptions, clock: Clock) {
    this.#options = { maxSources: 100_000, ...options };
    this.#clock = clock;
  }

  /** Takes a token for `address`; false means over the limit (drop). */
  admit(address: string): boolean {
    const now = this.#clock.monotonic();
    let b = this.#buckets.get(address);
    if (!b) {
      if (this.#buckets.size >= this.#options.maxSources) this.#evict(now);
      b = { tokens: this.#options.burst, last: now };
      this.#buckets.set(address, b);
    } else {
      b.tokens = Math.min(this.#options.burst, b.tokens + ((now - b.last) / 1000) * this.#options.perSecond);
      b.last = now;
    }
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  get trackedSources(): number {
    return this.#buckets.size;
  }

  #evict(now: number): void {
    const fullAfterMs = (this.#options.burst / this.#options.perSecond) * 1000;
    for (const [address, b] of this.#buckets) if (now - b.last >= fullAfterMs) this.#buckets.delete(address);
    // Everyone is active: drop the oldest entry so memory stays bounded.
    if (this.#buckets.size >= this.#options.maxSources) {
      const first = this.#buckets.keys().next();
      if (!first.done) this.#buckets.delete(first.value);
    }
  }
}
