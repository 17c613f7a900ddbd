import t from 'tap';
import { randomBytes } from 'node:crypto';
import { FakeClock } from '../common/clock.js';
import { SecretBox } from '../common/secret-box.js';
import { IDEMPOTENCY_ABANDONED_MS, IDEMPOTENCY_TTL_MS } from './idempotency-repository.js';
import { openStore } from './index.js';

async function setup(t: { teardown(fn: () => void | Promise<void>): void }) {
  const clock = new FakeClock();
  const store = await openStore(':memory:', clock, { idleMs: 60_000, absoluteMs: 3600_000 }, new SecretBox(randomBytes(32)));
  t.teardown(() => store.close());
  return { clock, store, tenant: (await store.tenants.create('Acme')).id };
}

t.test('docs/API.md "Calls": a key is reserved once, completed once, and replays until 24 h', async (t) => {
  const { clock, store, tenant } = await setup(t);
  const repo = store.idempotency;
  t.same(await repo.reserve(tenant, 'k', 'h1'), { outcome: 'reserved' });
  t.same(await repo.reserve(tenant, 'k', 'h1'), { outcome: 'in_flight', requestHash: 'h1' });
  await repo.complete(tenant, 'k', 200, '{"a":1}');
  await repo.complete(tenant, 'k', 500, 'later answers never overwrite the first');
  t.same(await repo.reserve(tenant, 'k', 'h2'), { outcome: 'completed', requestHash: 'h1', status: 200, responseJson: '{"a":1}' });
  clock.advance(IDEMPOTENCY_TTL_MS);
  t.equal((await repo.reserve(tenant, 'k', 'h2')).outcome, 'completed', 'exactly 24 h old still replays');
  clock.advance(1);
  t.same(await repo.reserve(tenant, 'k', 'h2'), { outcome: 'reserved' }, 'older than 24 h is free again');
  t.end();
});

t.test('docs/API.md "Calls": a released reservation is free; an abandoned one is taken over', async (t) => {
  const { clock, store, tenant } = await setup(t);
  const repo = store.idempotency;
  await repo.reserve(tenant, 'k', 'h1');
  await repo.release(tenant, 'k');
  t.same(await repo.reserve(tenant, 'k', 'h1'), { outcome: 'reserved' }, 'released (a 5xx): a retry runs again');
  clock.advance(IDEMPOTENCY_ABANDONED_MS - 1);
  t.equal((await repo.reserve(tenant, 'k', 'h1')).outcome, 'in_flight');
  clock.advance(2);
  t.same(await repo.reserve(tenant, 'k', 'h1'), { outcome: 'reserved' }, 'a reservation its process never completed');
  await repo.complete(tenant, 'k', 200, '{}');
  await repo.release(tenant, 'k');
  t.equal((await repo.reserve(tenant, 'k', 'h1')).outcome, 'completed', 'release never drops a stored response');
  t.end();
});
