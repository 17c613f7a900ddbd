import t from 'tap';
import { randomBytes } from 'node:crypto';
import { FakeClock } from '../common/clock.js';
import { SecretBox } from '../common/secret-box.js';
import type { TenantId } from '../common/ids.js';
import { openStore } from './index.js';
import { sqliteOf } from '../../test/support/sqlite-of.js';

const policy = { idleMs: 30 * 60_000, absoluteMs: 8 * 3600_000 };

t.test('docs/API.md "Authentication": API keys are stored as hashes and revocation ends their sessions', async (t) => {
  const clock = new FakeClock();
  const store = await openStore(':memory:', clock, policy, new SecretBox(randomBytes(32)));
  t.teardown(() => store.close());
  const tenant = await store.tenants.create('Acme');
  const { apiKey, record } = await store.apiKeys.create(tenant.id, 'live');
  t.match(apiKey, /^vgw_live_[0-9A-Za-z]{40}$/);
  const { apiKey: sandboxKey } = await store.apiKeys.create(tenant.id, 'sandbox');
  t.match(sandboxKey, /^vgw_test_/);
  const stored = sqliteOf(store).prepare('SELECT * FROM api_keys').all() as Record<string, unknown>[];
  t.notOk(JSON.stringify(stored).includes(apiKey), 'the clear key is nowhere in the table');
  t.equal((await store.apiKeys.findActive(apiKey))?.id, record.id);
  t.equal(await store.apiKeys.findActive('vgw_live_' + 'x'.repeat(40)), undefined);
  const token = await store.sessions.create(tenant.id, record.id);
  t.equal((await store.sessions.authenticate(token))?.tenantId, tenant.id);
  t.ok(await store.apiKeys.revoke(apiKey));
  t.notOk(await store.apiKeys.revoke(apiKey), 'revoking twice changes nothing');
  t.equal(await store.apiKeys.findActive(apiKey), undefined);
  t.equal(await store.sessions.authenticate(token), undefined, 'the session died with its key');
  t.end();
});

t.test('docs/API.md "Authentication": sessions expire when idle and at their absolute limit', async (t) => {
  const clock = new FakeClock();
  const store = await openStore(':memory:', clock, policy, new SecretBox(randomBytes(32)));
  t.teardown(() => store.close());
  const tenant = await store.tenants.create('Acme');
  const { record } = await store.apiKeys.create(tenant.id, 'live');
  const idle = await store.sessions.create(tenant.id, record.id);
  clock.advance(29 * 60_000);
  t.ok(await store.sessions.authenticate(idle), 'still alive just inside the idle limit');
  clock.advance(29 * 60_000);
  t.ok(await store.sessions.authenticate(idle), 'use refreshed the idle timer');
  clock.advance(31 * 60_000);
  t.equal(await store.sessions.authenticate(idle), undefined, 'idle too long');
  const busy = await store.sessions.create(tenant.id, record.id);
  let alive = 0;
  for (let i = 0; i < 16; i++) { // 16 × 29 min = 7 h 44 min of steady use
    clock.advance(29 * 60_000);
    if (await store.sessions.authenticate(busy)) alive++;
  }
  t.equal(alive, 16, 'steady use keeps it alive inside the absolute limit');
  clock.advance(29 * 60_000); // 8 h 13 min after creation
  t.equal(await store.sessions.authenticate(busy), undefined, 'absolute limit reached even with steady use');
  const out = await store.sessions.create(tenant.id, record.id);
  t.ok(await store.sessions.revoke(out));
  t.equal(await store.sessions.authenticate(out), undefined, 'logout revokes');
  t.end();
});

t.test('numbers: one holder at a time, listed newest first with a stable keyset cursor', async (t) => {
  const clock = new FakeClock();
  const store = await openStore(':memory:', clock, policy, new SecretBox(randomBytes(32)));
  t.teardown(() => store.close());
  const a = (await store.tenants.create('A')).id;
  const b = (await store.tenants.create('B')).id;
  for (let i = 0; i < 5; i++) {
    t.ok((await store.numbers.add(a, `+1555010000${i}`, 'sandbox')).ok);
    clock.advance(1);
  }
  t.same(await store.numbers.add(a, '+15550100000', 'sandbox'), { ok: false, reason: 'already_held' });
  t.same(await store.numbers.add(b, '+15550100000', 'sandbox'), { ok: false, reason: 'held_by_another_tenant' });
  t.ok((await store.numbers.add(b, '+15550100000', 'telnyx')).ok, 'the same digits on another carrier are another number');
  const first = await store.numbers.list(a, { limit: 2 });
  t.same(first.items.map((n) => n.phone_number), ['+15550100004', '+15550100003']);
  t.ok(first.next);
  await store.numbers.add(a, '+15550100009', 'sandbox'); // inserted between pages: must not shift them
  const second = await store.numbers.list(a, { limit: 2, after: first.next! });
  t.same(second.items.map((n) => n.phone_number), ['+15550100002', '+15550100001']);
  const third = await store.numbers.list(a, { limit: 2, after: second.next! });
  t.same(third.items.map((n) => n.phone_number), ['+15550100000']);
  t.equal(third.next, null);
  t.equal((await store.numbers.list(null, { limit: 100 })).items.length, 7);
  t.equal((await store.numbers.list('ten_other' as TenantId, { limit: 100 })).items.length, 0);
  t.end();
});
