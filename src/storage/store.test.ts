import t from 'tap';
import { randomBytes } from 'node:crypto';
import { FakeClock } from '../common/clock.js';
import { SecretBox } from '../common/secret-box.js';
import type { TenantId } from '../common/ids.js';
import { openStore } from './index.js';

const policy = { idleMs: 30 * 60_000, absoluteMs: 8 * 3600_000 };

t.test('docs/API.md "Authentication": API keys are stored as hashes and revocation ends their sessions', (t) => {
  const clock = new FakeClock();
  const store = openStore(':memory:', clock, policy, new SecretBox(randomBytes(32)));
  t.teardown(() => store.close());
  const tenant = store.tenants.create('Acme');
  const { apiKey, record } = store.apiKeys.create(tenant.id, 'live');
  t.match(apiKey, /^vgw_live_[0-9A-Za-z]{40}$/);
  const { apiKey: sandboxKey } = store.apiKeys.create(tenant.id, 'sandbox');
  t.match(sandboxKey, /^vgw_test_/);
  const stored = store.db.prepare('SELECT * FROM api_keys').all() as Record<string, unknown>[];
  t.notOk(JSON.stringify(stored).includes(apiKey), 'the clear key is nowhere in the table');
  t.equal(store.apiKeys.findActive(apiKey)?.id, record.id);
  t.equal(store.apiKeys.findActive('vgw_live_' + 'x'.repeat(40)), undefined);
  const token = store.sessions.create(tenant.id, record.id);
  t.equal(store.sessions.authenticate(token)?.tenantId, tenant.id);
  t.ok(store.apiKeys.revoke(apiKey));
  t.notOk(store.apiKeys.revoke(apiKey), 'revoking twice changes nothing');
  t.equal(store.apiKeys.findActive(apiKey), undefined);
  t.equal(store.sessions.authenticate(token), undefined, 'the session died with its key');
  t.end();
});

t.test('docs/API.md "Authentication": sessions expire when idle and at their absolute limit', (t) => {
  const clock = new FakeClock();
  const store = openStore(':memory:', clock, policy, new SecretBox(randomBytes(32)));
  t.teardown(() => store.close());
  const tenant = store.tenants.create('Acme');
  const { record } = store.apiKeys.create(tenant.id, 'live');
  const idle = store.sessions.create(tenant.id, record.id);
  clock.advance(29 * 60_000);
  t.ok(store.sessions.authenticate(idle), 'still alive just inside the idle limit');
  clock.advance(29 * 60_000);
  t.ok(store.sessions.authenticate(idle), 'use refreshed the idle timer');
  clock.advance(31 * 60_000);
  t.equal(store.sessions.authenticate(idle), undefined, 'idle too long');
  const busy = store.sessions.create(tenant.id, record.id);
  let alive = 0;
  for (let i = 0; i < 16; i++) { // 16 × 29 min = 7 h 44 min of steady use
    clock.advance(29 * 60_000);
    if (store.sessions.authenticate(busy)) alive++;
  }
  t.equal(alive, 16, 'steady use keeps it alive inside the absolute limit');
  clock.advance(29 * 60_000); // 8 h 13 min after creation
  t.equal(store.sessions.authenticate(busy), undefined, 'absolute limit reached even with steady use');
  const out = store.sessions.create(tenant.id, record.id);
  t.ok(store.sessions.revoke(out));
  t.equal(store.sessions.authenticate(out), undefined, 'logout revokes');
  t.end();
});

t.test('numbers: one holder at a time, listed newest first with a stable keyset cursor', (t) => {
  const clock = new FakeClock();
  const store = openStore(':memory:', clock, policy, new SecretBox(randomBytes(32)));
  t.teardown(() => store.close());
  const a = store.tenants.create('A').id;
  const b = store.tenants.create('B').id;
  for (let i = 0; i < 5; i++) {
    t.ok(store.numbers.add(a, `+1555010000${i}`, 'sandbox').ok);
    clock.advance(1);
  }
  t.same(store.numbers.add(a, '+15550100000', 'sandbox'), { ok: false, reason: 'already_held' });
  t.same(store.numbers.add(b, '+15550100000', 'sandbox'), { ok: false, reason: 'held_by_another_tenant' });
  t.ok(store.numbers.add(b, '+15550100000', 'telnyx').ok, 'the same digits on another carrier are another number');
  const first = store.numbers.list(a, { limit: 2 });
  t.same(first.items.map((n) => n.phone_number), ['+15550100004', '+15550100003']);
  t.ok(first.next);
  store.numbers.add(a, '+15550100009', 'sandbox'); // inserted between pages: must not shift them
  const second = store.numbers.list(a, { limit: 2, after: first.next! });
  t.same(second.items.map((n) => n.phone_number), ['+15550100002', '+15550100001']);
  const third = store.numbers.list(a, { limit: 2, after: second.next! });
  t.same(third.items.map((n) => n.phone_number), ['+15550100000']);
  t.equal(third.next, null);
  t.equal(store.numbers.list(null, { limit: 100 }).items.length, 7);
  t.equal(store.numbers.list('ten_other' as TenantId, { limit: 100 }).items.length, 0);
  t.end();
});
