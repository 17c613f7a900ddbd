import t from 'tap';
import { silentLogger } from '../common/logger.js';
import { RedisLiveState } from '../cluster/redis-live-state.js';
import { startRedis } from '../../test/support/redis.js';
import type { TenantId } from '../common/ids.js';
import { redisEngineDirectory } from './engine-directory.js';

const noStoredOwner = { ownerOf: () => Promise.resolve(undefined), ownerOfControlId: () => Promise.resolve(undefined) };

/** Admits `n` calls on `nodeId` so that its lease counts them. */
async function carry(live: RedisLiveState, nodeId: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const callId = `call_${nodeId}_${i}`;
    await live.admit({ callId, tenantId: `ten_${nodeId}`, nodeId, callControlId: `v3:${callId}`, carrier: 'telnyx', createdAt: new Date(Date.UTC(2026, 10, 27, 8, 0, i)).toISOString(), list: '{}' }, { tenantLimit: 100, carrierLimit: 100 });
  }
}

t.test('docs/CLUSTER.md "Live state in Redis": a new call goes to the live engine with the most free capacity, never a draining or full one', async (t) => {
  const redis = await startRedis(t);
  if (!redis) return;
  const live = await RedisLiveState.open({ url: redis.url, logger: silentLogger(), leaseTtlMs: 400 });
  t.teardown(() => live.close());
  const directory = redisEngineDirectory(live, noStoredOwner);
  t.equal(await directory.pick(), undefined, 'no engine, no pick');

  await carry(live, 'big-busy', 7); // 10 − 7 = 3 free
  await carry(live, 'small', 1); // 5 − 1 = 4 free
  await carry(live, 'full', 2); // 2 − 2 = 0 free
  const renew = async (): Promise<void> => {
    await live.renewLease({ nodeId: 'draining', internalUrl: 'http://127.0.0.1:9001', capacity: 50, draining: true });
    await live.renewLease({ nodeId: 'big-busy', internalUrl: 'http://127.0.0.1:9002', capacity: 10, draining: false });
    await live.renewLease({ nodeId: 'small', internalUrl: 'http://127.0.0.1:9003', capacity: 5, draining: false });
    await live.renewLease({ nodeId: 'full', internalUrl: 'http://127.0.0.1:9004', capacity: 2, draining: false });
  };
  await renew();
  t.same(await directory.pick(), { id: 'small', internal_url: 'http://127.0.0.1:9003' }, 'the most free places, not the fewest calls nor the largest capacity');
  t.same(await directory.get('full'), { id: 'full', internal_url: 'http://127.0.0.1:9004' }, 'a full engine still takes commands on its calls');
  t.equal(await directory.ownerOf('ten_small' as TenantId, 'call_small_0'), 'small');
  t.equal(await directory.get('unknown'), undefined);

  // Only `draining` keeps renewing: the others' leases expire.
  while (!(await live.deadNodes()).some((d) => d.nodeId === 'small')) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    await live.renewLease({ nodeId: 'draining', internalUrl: 'http://127.0.0.1:9001', capacity: 50, draining: true });
  }
  t.equal(await directory.get('small'), 'expired', 'an engine whose lease expired is gone, not unknown');
  t.equal(await directory.pick(), undefined, 'a draining engine gets no new call, even when it is the only one alive');
  t.end();
});
