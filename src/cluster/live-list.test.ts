import t from 'tap';
import { randomBytes } from 'node:crypto';
import { FakeClock } from '../common/clock.js';
import { silentLogger } from '../common/logger.js';
import { SecretBox } from '../common/secret-box.js';
import { callRecord } from '../../test/support/call-records.js';
import { startRedis } from '../../test/support/redis.js';
import { openStore, type CallListFilter, type CallRecord, type CallRecordState } from '../storage/index.js';
import { RedisLiveState } from './redis-live-state.js';

const policy = { idleMs: 30 * 60_000, absoluteMs: 8 * 3600_000 };

t.test('docs/API.md "Calls" (GET /v1/calls): the live list from Redis has the SQL live list\'s order, filters and cursors', async (t) => {
  const redis = await startRedis(t);
  if (!redis) return;
  const live = await RedisLiveState.open({ url: redis.url, logger: silentLogger() });
  t.teardown(() => live.close());
  // The API process's SQL live list (liveList: 'database') is the reference.
  const store = await openStore(':memory:', new FakeClock(), policy, new SecretBox(randomBytes(32)), { liveList: 'database' });
  t.teardown(() => store.close());
  const tenants = [(await store.tenants.create('Acme')).id, (await store.tenants.create('Globex')).id];

  // Many calls share a second (created_at ties are broken by id), in every live state, both
  // directions, two carriers; a few have ended (in SQL only: an ended call is released).
  const at = (s: number): string => new Date(Date.UTC(2026, 10, 27, 8) + s * 1000).toISOString();
  const states: CallRecordState[] = ['initiated', 'ringing', 'active', 'ended'];
  const calls: CallRecord[] = [];
  for (let i = 0; i < 90; i++) {
    const tenant = tenants[i % 2]!;
    calls.push(callRecord(tenant, at(Math.floor(i / 5)), {
      state: states[(i * 7) % 4]!, direction: i % 3 === 0 ? 'inbound' : 'outbound', carrier: i % 4 === 0 ? 'sandbox' : 'telnyx',
    }));
  }
  for (const c of calls) {
    await store.calls.insert(c);
    if (c.state === 'ended') continue;
    const admitted = await live.admit(
      { callId: c.id, tenantId: c.tenant_id, nodeId: 'a', callControlId: c.call_control_id, carrier: c.carrier, createdAt: c.created_at, list: JSON.stringify(c) },
      { tenantLimit: 1000, carrierLimit: 1000 },
    );
    t.same(admitted, { ok: true });
  }

  const filters: CallListFilter[] = [
    {}, { state: 'ringing' }, { state: 'active', direction: 'inbound' }, { direction: 'outbound' },
    { carrier: { is: 'sandbox' } }, { carrier: { isNot: 'sandbox' } }, { state: 'initiated', carrier: { isNot: 'sandbox' } },
  ];
  for (const tenant of tenants) {
    for (const filter of filters) {
      for (const limit of [1, 3, 50]) {
        let after: { createdAt: string; id: string } | undefined;
        let pages = 0;
        for (;;) {
          const sql = await store.calls.list(tenant, filter, { limit, after });
          const fromRedis = await live.list<CallRecord>(tenant, filter, { limit, after });
          t.same(fromRedis.items.map((c) => c.id), sql.items.map((c) => c.id), `same page: ${JSON.stringify(filter)} limit ${limit} page ${pages}`);
          t.same(fromRedis.next, sql.next, 'same cursor');
          if (sql.next === null || fromRedis.next === null) break;
          after = sql.next;
          pages++;
        }
      }
    }
  }
  t.end();
});
