/**
 * Storage contract (docs/ARCHITECTURE.md "Storage"), tenants and their credentials, on SQLite and
 * PostgreSQL: docs/API.md "Authentication" (hashed keys, revocation ends sessions, idle and
 * absolute session limits), caller IDs (docs/API.md "Caller IDs"), the tenant transfer policy,
 * and engine nodes (docs/ARCHITECTURE.md "Process roles").
 */
import t from 'tap';
import type { TenantId } from '../../src/common/ids.js';
import { onEachBackend } from './contract-rig.js';

onEachBackend(t, 'tenants: created, listed newest first, counted; transfer policy stored as given', async (t, { store, clock }) => {
  t.equal(await store.tenants.count(), 0, 'count(*) of an empty table is the number 0');
  const a = await store.tenants.create('Acme');
  clock.advance(1);
  const b = await store.tenants.create('Globex');
  t.equal(await store.tenants.count(), 2, 'count(*) is a number on both backends');
  t.same((await store.tenants.list()).map((x) => x.id), [b.id, a.id]);
  t.same(await store.tenants.get(a.id), a);
  t.equal(await store.tenants.get('ten_missing' as TenantId), undefined);
  t.equal(await store.tenants.transferPolicy(a.id), null);
  t.ok(await store.tenants.setTransferPolicy(a.id, { allow: ['+1555*'], max_per_call: 2 }));
  t.same(await store.tenants.transferPolicy(a.id), { allow: ['+1555*'], max_per_call: 2 });
  t.notOk(await store.tenants.setTransferPolicy('ten_missing' as TenantId, null), 'no such tenant: no row changed');
});

onEachBackend(t, 'docs/API.md "Authentication": keys are stored as hashes; revoking one ends its sessions in the same transaction', async (t, { store }) => {
  const tenant = await store.tenants.create('Acme');
  const { apiKey, record } = await store.apiKeys.create(tenant.id, 'live');
  t.equal((await store.apiKeys.findActive(apiKey))?.id, record.id);
  t.equal(record.revoked_at, null);
  const token = await store.sessions.create(tenant.id, record.id);
  t.match(await store.sessions.authenticate(token), { tenantId: tenant.id });
  t.ok(await store.apiKeys.revoke(apiKey));
  t.notOk(await store.apiKeys.revoke(apiKey), 'revoking twice changes nothing');
  t.equal(await store.apiKeys.findActive(apiKey), undefined);
  t.equal(await store.sessions.authenticate(token), undefined, 'the session died with its key');
});

onEachBackend(t, 'docs/API.md "Authentication": sessions end when idle and at their absolute limit, and on logout', async (t, { store, clock }) => {
  const tenant = await store.tenants.create('Acme');
  const { record } = await store.apiKeys.create(tenant.id, 'sandbox');
  const idle = await store.sessions.create(tenant.id, record.id);
  clock.advance(29 * 60_000);
  t.ok(await store.sessions.authenticate(idle), 'alive inside the idle limit');
  clock.advance(31 * 60_000);
  t.equal(await store.sessions.authenticate(idle), undefined, 'idle too long');
  const out = await store.sessions.create(tenant.id, record.id);
  t.ok(await store.sessions.revoke(out));
  t.notOk(await store.sessions.revoke(out), 'revoked once');
  t.equal(await store.sessions.authenticate(out), undefined);
});

onEachBackend(t, 'docs/API.md "Caller IDs": unique per tenant and number (ON CONFLICT DO NOTHING), listed with a keyset cursor', async (t, { store, clock }) => {
  const a = (await store.tenants.create('A')).id;
  const b = (await store.tenants.create('B')).id;
  for (const n of ['+15550100001', '+15550100002', '+15550100003']) {
    t.ok((await store.callerIds.add(a, n)).ok);
    clock.advance(1);
  }
  t.same(await store.callerIds.add(a, '+15550100002'), { ok: false, reason: 'already_verified' });
  t.ok((await store.callerIds.add(b, '+15550100002')).ok, 'another tenant may verify the same number');
  t.ok(await store.callerIds.isVerified(a, '+15550100003'));
  t.notOk(await store.callerIds.isVerified(b, '+15550100003'), 'tenant isolation');
  const first = await store.callerIds.list(a, { limit: 2 });
  t.same(first.items.map((c) => c.phone_number), ['+15550100003', '+15550100002']);
  const second = await store.callerIds.list(a, { limit: 2, after: first.next! });
  t.same(second.items.map((c) => c.phone_number), ['+15550100001']);
  t.equal(second.next, null);
});

onEachBackend(t, 'docs/ARCHITECTURE.md "Process roles": nodes register (upsert), refresh, drain and leave; epoch milliseconds stay numbers', async (t, { store, clock }) => {
  await store.nodes.register({ id: 'engine-a', internalUrl: 'http://127.0.0.1:8091', liveCalls: 0 });
  await store.nodes.register({ id: 'engine-a', internalUrl: 'http://127.0.0.1:8092', liveCalls: 3 });
  const node = await store.nodes.get('engine-a');
  t.match(node, { id: 'engine-a', internal_url: 'http://127.0.0.1:8092', live_calls: 3, draining: 0 });
  t.equal(node?.last_seen_ms, clock.now(), 'a BIGINT comes back as the same number');
  t.equal(typeof node?.last_seen_ms, 'number');
  clock.advance(5_000);
  t.ok(await store.nodes.refresh('engine-a', 7));
  t.notOk(await store.nodes.refresh('engine-missing', 1));
  t.same((await store.nodes.live(10_000)).map((n) => n.id), ['engine-a']);
  await store.nodes.drain('engine-a');
  t.same(await store.nodes.live(10_000), [], 'a draining engine takes no new call');
  await store.nodes.remove('engine-a');
  t.equal(await store.nodes.get('engine-a'), undefined);
});
