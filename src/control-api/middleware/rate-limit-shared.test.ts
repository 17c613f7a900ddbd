import t from 'tap';
import { createClient } from 'redis';
import { ApiError } from '../../common/errors.js';
import { startRedis } from '../../../test/support/redis.js';
import { RequestRateLimiter } from './rate-limit.js';

/** Spends `n` requests of `key`; how many were allowed before the first 429. */
async function spend(limiter: RequestRateLimiter, key: string, n: number): Promise<number> {
  for (let i = 0; i < n; i++) {
    try {
      await limiter.consume(key);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'rate_limited') return i;
      throw err;
    }
  }
  return n;
}

t.test('docs/CLUSTER.md "Live state in Redis": API processes spend one shared allowance; with Redis away each falls back to its own', async (t) => {
  const redis = await startRedis(t);
  if (!redis) return;
  // Two API processes, each with its own client of the cluster's Redis.
  const clients = [createClient({ url: redis.url, disableOfflineQueue: true }), createClient({ url: redis.url, disableOfflineQueue: true })];
  for (const c of clients) {
    c.on('error', () => undefined); // the outage below is expected
    await c.connect();
    t.teardown(() => { if (c.isOpen) c.destroy(); });
  }
  const [a, b] = clients.map((sharedStore) => new RequestRateLimiter({ perSecond: 3, burst: 1, sharedStore }));

  t.equal(await spend(a!, '203.0.113.7', 2), 2);
  t.equal(await spend(b!, '203.0.113.7', 2), 2, 'the other process spends the rest of the same allowance (3 steady + 1 burst)');
  t.equal(await spend(a!, '203.0.113.7', 1), 0, 'the next request, on either process, is refused');
  t.equal(await spend(b!, '198.51.100.9', 4), 4, 'another client address has its own allowance');

  await redis.stop();
  t.equal(await spend(a!, '203.0.113.7', 10), 4, 'Redis away: the in-memory allowance applies, neither an error nor a wait');
  t.end();
});
