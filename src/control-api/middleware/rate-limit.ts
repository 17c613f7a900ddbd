/**
 * @module Per-key rate limiting (per client address before authentication): a steady rate per
 * second plus a burst allowance, answered with 429 `rate_limited` and Retry-After. With a shared
 * store (the cluster's Redis, docs/CLUSTER.md "Live state in Redis") every API process spends
 * from the same allowance; while that store is away each process falls back to its own
 * in-memory allowance (the insurance limiter), so the cluster then allows up to one per process.
 */
import { BurstyRateLimiter, RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { ApiError } from '../../common/errors.js';

export interface RateLimitOptions {
  perSecond: number;
  /** Extra requests allowed above the steady rate within any 10 s. */
  burst: number;
  /** A connected node-redis (v4 and later) client shared by the API processes; in memory when absent. */
  sharedStore?: unknown;
}

/** Keys in the shared store sit beside the cluster's other `vgw:` keys. */
const SHARED_PREFIX = 'vgw:rate';

function limiter(sharedStore: unknown, keyPrefix: string, points: number, duration: number): RateLimiterAbstract {
  const memory = new RateLimiterMemory({ keyPrefix, points, duration });
  if (sharedStore === undefined) return memory;
  return new RateLimiterRedis({
    storeClient: sharedStore, useRedisPackage: true, keyPrefix: `${SHARED_PREFIX}:${keyPrefix}`, points, duration,
    // Offline: the in-memory allowance at once rather than a wait for a reconnection.
    rejectIfRedisNotReady: true, insuranceLimiter: memory,
  });
}

export class RequestRateLimiter {
  readonly #limiter: BurstyRateLimiter;

  constructor(options: RateLimitOptions) {
    this.#limiter = new BurstyRateLimiter(
      limiter(options.sharedStore, 'steady', options.perSecond, 1),
      limiter(options.sharedStore, 'burst', options.burst, 10),
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
