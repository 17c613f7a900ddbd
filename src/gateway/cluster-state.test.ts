import t from 'tap';
import { Registry } from 'prom-client';
import { silentLogger } from '../common/logger.js';
import { RedisLiveState } from '../cluster/redis-live-state.js';
import { callRecord } from '../../test/support/call-records.js';
import { startRedis } from '../../test/support/redis.js';
import type { TenantId } from '../common/ids.js';
import { clusterAdmission, unavailableCounter } from './cluster-state.js';

t.test('docs/CLUSTER.md "Live state in Redis": while Redis is away an engine admits on its own limits, and counts it', async (t) => {
  const redis = await startRedis(t);
  if (!redis) return;
  const live = await RedisLiveState.open({ url: redis.url, logger: silentLogger(), commandTimeoutMs: 300 });
  t.teardown(() => live.close());
  const metrics = new Registry();
  const admission = clusterAdmission(live, 'engine-a', silentLogger(), unavailableCounter(metrics));
  const tenant = 'ten_a' as TenantId;
  const limits = { tenantLimit: 1, carrierLimit: 10 };
  const first = callRecord(tenant, '2026-11-27T08:00:00.000Z');
  t.same(await admission.admit(first, limits), { ok: true });
  t.same(await admission.admit(callRecord(tenant, '2026-11-27T08:00:01.000Z'), limits), { ok: false, scope: 'tenant' }, 'with Redis up the cluster limit applies');

  await redis.stop();
  t.same(await admission.admit(callRecord(tenant, '2026-11-27T08:00:02.000Z'), limits), { ok: true }, 'Redis away: admitted (the engine checked its own limits before)');
  admission.release(first.id); // returns at once, never throws
  admission.update(first);
  const counted = await metrics.getSingleMetricAsString('vgw_cluster_state_unavailable_total');
  t.match(counted, /vgw_cluster_state_unavailable_total\{operation="admit"\} 1/, 'the admission without the cluster is counted');
  t.end();
});
