/**
 * Storage contract, docs/CLUSTER.md "Call events from several engines": senders sharing one outbox
 * claim what they send, so each delivery goes out from one of them. A claim hides a delivery from
 * every other sender until the attempt's outcome clears it or the claim runs out (its sender
 * died); a restarted sender drops its own claims at once. On PostgreSQL two stores (two
 * processes) claim at the same moment and never get the same delivery.
 */
import t from 'tap';
import type { TenantId } from '../../src/common/ids.js';
import type { Store } from '../../src/storage/index.js';
import { onEachBackend } from './contract-rig.js';

const A = { by: 'engine-a', forMs: 60_000 };
const B = { by: 'engine-b', forMs: 60_000 };

async function outbox(store: Store, calls: number): Promise<TenantId> {
  const tenant = (await store.tenants.create('Acme')).id;
  await store.webhookEndpoints.create(tenant, { url: 'https://hooks.example.com/a', events: ['*'], description: null, secret: 'whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' });
  for (let i = 0; i < calls; i++) await store.events.append(tenant, [{ type: 'call.initiated', callId: `call_${i}`, data: {} }]);
  return tenant;
}

onEachBackend(t, 'a claimed delivery is hidden from other senders until its outcome or its claim\'s end', async (t, { store, clock }) => {
  await outbox(store, 2);
  const [first, second] = await store.eventDeliveries.claim(1, {}, A).then(async (a) => [...a, ...await store.eventDeliveries.claim(1, {}, A)]);
  t.ok(first && second && first.id !== second.id, 'one claim, then the next due delivery');
  t.same(await store.eventDeliveries.claim(10, {}, B), [], 'both are claimed: another sender gets nothing');
  t.same(await store.eventDeliveries.due(10), [], 'nor are they due');

  t.equal(await store.eventDeliveries.recordAttempt(first!, { ok: false, status: 500, durationMs: 5, error: 'answered 500', responseBody: null, nextAttemptAt: new Date(clock.now()).toISOString() }), 'pending');
  const retried = await store.eventDeliveries.claim(10, {}, B);
  t.same(retried.map((d) => d.id), [first!.id], 'an attempt\'s outcome clears its claim');
  t.equal(await store.eventDeliveries.recordAttempt(retried[0]!, { ok: true, status: 204, durationMs: 5, error: null, responseBody: null, nextAttemptAt: null }), 'delivered');

  clock.advance(A.forMs - 1);
  t.same(await store.eventDeliveries.claim(10, {}, B), [], 'the other claim still runs');
  clock.advance(1);
  t.same((await store.eventDeliveries.claim(10, {}, B)).map((d) => d.id), [second!.id], 'a claim that ran out (its sender died) is taken over');
});

onEachBackend(t, 'a restarted sender drops its previous run\'s claims; a skipped delivery is released by id', async (t, { store }) => {
  await outbox(store, 3);
  const claimed = await store.eventDeliveries.claim(10, {}, A);
  t.equal(claimed.length, 3);
  t.equal(await store.eventDeliveries.releaseClaims(A.by, [claimed[0]!.id]), 1, 'one released by id');
  t.equal(await store.eventDeliveries.releaseClaims(B.by, [claimed[1]!.id]), 0, 'only its own claimant releases a claim');
  t.same((await store.eventDeliveries.due(10)).map((d) => d.id), [claimed[0]!.id]);
  t.equal(await store.eventDeliveries.releaseClaims(A.by), 2, 'the rest of the run\'s claims');
  t.equal((await store.eventDeliveries.due(10)).length, 3, 'all due again at once');
});

onEachBackend(t, 'senders claiming at the same moment never get the same delivery', async (t, { backend, store, reopen }) => {
  await outbox(store, 40);
  // Two processes on PostgreSQL; on SQLite (one file, one writer) the same store twice.
  const other = backend === 'postgres' ? await reopen() : store;
  const rounds = await Promise.all([
    ...Array.from({ length: 4 }, () => store.eventDeliveries.claim(8, {}, A)),
    ...Array.from({ length: 4 }, () => other.eventDeliveries.claim(8, {}, B)),
  ]);
  const ids = rounds.flat().map((d) => d.id);
  t.equal(new Set(ids).size, ids.length, `${ids.length} claims, none twice`);
  // Claimers reading the same due rows collide: the first to write gets them, the others nothing.
  t.ok(ids.length >= 8, 'a claimer got its full batch');
  const rest = [...await store.eventDeliveries.claim(100, {}, A), ...await other.eventDeliveries.claim(100, {}, B)];
  t.equal(ids.length + rest.length, 40, 'every delivery claimed exactly once');
});
