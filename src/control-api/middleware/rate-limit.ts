/**
 * @module Per-key rate limiting (per client address before authentication): a steady rate per
 * second plus a burst allowance, answered with 429 `rate_limited` and Retry-After.
 */
import { BurstyRateLimiter, RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { ApiError } from '../../common/errors.js';

export interface RateLimitOptions {
  perSecond: number;
  /** Extra requests allowed above the steady rate within any 10 s. */
  burst: number;
}

export class RequestRateLimiter {
  readonly #limiter: BurstyRateLimiter;

  constructor(options: RateLimitOptions) {
    this.#limiter = new BurstyRateLimiter(
      new RateLimiterMemory({ points: options.perSecond, duration: 1 }),
      new RateLimiterMemory({ keyPrefix: 'burst', points: options.burst, duration: 10 }),
    );
  }

  /** Spends one request for `key`; throws 429 when none is left. */
  async consume(key: string): Promise<void> {
    try {
      await this.#limiter.consume(key);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      const retryAfter = Math.max(1, Math.ceil(err.msBeforeNext / 1000));
      throw new ApiError(429, 'rate_limited', 'Too many requests; slow down.', { headers: { 'Retry-After': String(retryAfter) } });
    }
  }
}
