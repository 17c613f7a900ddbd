/**
 * Storage contract, docs/CLUSTER.md "Call events from several engines": senders sharing one outbox
 * claim what they send, so each delivery goes out from one of them. A claim hides a delivery from
 * every other sender until the attempt's outcome clears it or the claim runs out (its sender
 * died); a restarted sender drops its own claims at once. On PostgreSQL two stores (two
 * processes) claim at the same moment and never get the same delivery. The one sender of an
 * outbox (no claims) checks the same condition without writing.
 */
import t from 'tap';
import type { TenantId } from '../../src/common/ids.js';
import type { DueDelivery, Store } from '../../src/storage/index.js';
import { onEachBackend } from './contract-rig.js';

const A = { by: 'engine-a', forMs: 60_000 };
const B = { by: 'engine-b', forMs: 60_000 };

/** What a sender does: reads what is due, then claims it; returns the deliveries claimed. */
async function claimDue(store: Store, limit: number, claimant: typeof A): Promise<DueDelivery[]> {
  const due = await store.eventDeliveries.due(limit);
  const claimed = await store.eventDeliveries.claim(due.map((d) => d.id), claimant);
  return due.filter((d) => claimed.has(d.id));
}

async function outbox(store: Store, calls: number): Promise<TenantId> {
  const tenant = (await store.tenants.create('Acme')).id;
  await store.webhookEndpoints.create(tenant, { url: 'https://hooks.example.com/a', events: ['*'], description: null, secret: 'whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' });
  for (let i = 0; i < calls; i++) await store.events.append(tenant, [{ type: 'call.initiated', callId: `call_${i}`, data: {} }]);
  return tenant;
}

onEachBackend(t, 'a claimed delivery is hidden from other senders until its outcome or its claim\'s end', async (t, { store, clock }) => {
  await outbox(store, 2);
  const [first, second] = await claimDue(store, 1, A).then(async (a) => [...a, ...await claimDue(store, 1, A)]);
  t.ok(first && second && first.id !== second.id, 'one claim, then the next due delivery');
  t.same(await claimDue(store, 10, B), [], 'both are claimed: another sender gets nothing');
  t.same(await store.eventDeliveries.due(10), [], 'nor are they due');

  t.equal(await store.eventDeliveries.recordAttempt(first!, { ok: false, status: 500, durationMs: 5, error: 'answered 500', responseBody: null, nextAttemptAt: new Date(clock.now()).toISOString() }), 'pending');
  const retried = await claimDue(store, 10, B);
  t.same(retried.map((d) => d.id), [first!.id], 'an attempt\'s outcome clears its claim');
  t.equal(await store.eventDeliveries.recordAttempt(retried[0]!, { ok: true, status: 204, durationMs: 5, error: null, responseBody: null, nextAttemptAt: null }), 'delivered');

  clock.advance(A.forMs - 1);
  t.same(await claimDue(store, 10, B), [], 'the other claim still runs');
  clock.advance(1);
  t.same((await claimDue(store, 10, B)).map((d) => d.id), [second!.id], 'a claim that ran out (its sender died) is taken over');
});

onEachBackend(t, 'a restarted sender drops its previous run\'s claims, and only those', async (t, { store }) => {
  await outbox(store, 3);
  t.equal((await claimDue(store, 2, A)).length, 2);
  t.equal((await claimDue(store, 1, B)).length, 1);
  t.equal(await store.eventDeliveries.releaseClaims(A.by), 2, 'the run\'s claims');
  t.equal((await store.eventDeliveries.due(10)).length, 2, 'due again at once; the other sender\'s claim still runs');
});

onEachBackend(t, 'a claim checks again that each delivery is still due', async (t, { store, clock }) => {
  const tenant = await outbox(store, 3);
  const [sent, disabled, held] = await store.eventDeliveries.due(10);
  // Since the read: one was sent by another sender, its endpoint disabled... (one endpoint: re-enabled below).
  await store.eventDeliveries.recordAttempt(sent!, { ok: true, status: 204, durationMs: 5, error: null, responseBody: null, nextAttemptAt: null });
  const endpoint = (await store.webhookEndpoints.list(tenant, { limit: 1 })).items[0]!;
  await store.webhookEndpoints.update(tenant, endpoint.id, { disabled: true });
  t.same([...await store.eventDeliveries.claim([sent!.id, disabled!.id], A)], [], 'sent, or its endpoint disabled: not claimed');
  await store.webhookEndpoints.update(tenant, endpoint.id, { disabled: false });
  t.equal((await store.eventDeliveries.claim([disabled!.id, held!.id], A)).size, 2, 'enabled again: claimed');
  // A later event of the sent one's call is due; then the earlier one is pending again (a redelivery).
  const [later] = await store.events.append(tenant, [{ type: 'call.ringing', callId: sent!.call_id, data: {} }]);
  const [next] = await store.eventDeliveries.dueOf([later!.seq]);
  t.ok(next, 'the later event is due');
  clock.advance(1);
  t.ok(await store.eventDeliveries.redeliver(tenant, sent!.event_id) > 0);
  t.same([...await store.eventDeliveries.claim([next!.id], A)], [], 'held back behind its call\'s earlier event');
});

onEachBackend(t, 'the deliveries of new events, and a call\'s next delivery, are read without a scan', async (t, { store }) => {
  const tenant = await outbox(store, 0);
  const [first, second] = await store.events.append(tenant, [
    { type: 'call.initiated', callId: 'call_x', data: {} }, { type: 'call.ringing', callId: 'call_x', data: {} },
  ]);
  const due = await store.eventDeliveries.dueOf([first!.seq, second!.seq]);
  t.same(due.map((d) => d.event_id), [first!.id], 'the call\'s second event waits for its first');
  const ofCallX = [{ endpointId: due[0]!.endpoint_id, callId: 'call_x' }];
  t.same((await store.eventDeliveries.nextOfCalls(ofCallX)).map((d) => d.event_id), [first!.id]);
  await store.eventDeliveries.recordAttempt(due[0]!, { ok: true, status: 204, durationMs: 5, error: null, responseBody: null, nextAttemptAt: null });
  t.same((await store.eventDeliveries.nextOfCalls(ofCallX)).map((d) => d.event_id), [second!.id], 'once the first is delivered, the next');
  t.same(await store.eventDeliveries.dueOf([]), []);
  t.same(await store.eventDeliveries.nextOfCalls([]), []);
});

onEachBackend(t, 'the next deliveries of several calls whose deliveries ended are read at once, each call in its order', async (t, { store }) => {
  const tenant = await outbox(store, 0);
  const [x1, x2, y1, y2, z1] = await store.events.append(tenant, [
    { type: 'call.initiated', callId: 'call_x', data: {} }, { type: 'call.ringing', callId: 'call_x', data: {} },
    { type: 'call.initiated', callId: 'call_y', data: {} }, { type: 'call.ringing', callId: 'call_y', data: {} },
    { type: 'call.initiated', callId: 'call_z', data: {} },
  ]);
  const first = await store.eventDeliveries.dueOf([x1!.seq, y1!.seq, z1!.seq]);
  t.equal(first.length, 3, 'each call\'s first event is due');
  const endpointId = first[0]!.endpoint_id;
  for (const d of first.filter((d) => d.call_id !== 'call_z')) {
    await store.eventDeliveries.recordAttempt(d, { ok: true, status: 204, durationMs: 5, error: null, responseBody: null, nextAttemptAt: null });
  }
  const next = await store.eventDeliveries.nextOfCalls([{ endpointId, callId: 'call_x' }, { endpointId, callId: 'call_y' }]);
  t.same(next.map((d) => d.event_id).sort(), [x2!.id, y2!.id].sort(), 'the second event of each call named, once its first was delivered');
  t.same(await store.eventDeliveries.nextOfCalls([{ endpointId, callId: 'call_q' }]), [], 'nothing of a call not named');
  t.same((await store.eventDeliveries.nextOfCalls([{ endpointId, callId: 'call_z' }])).map((d) => d.event_id), [z1!.id], 'a call whose first is still pending: that one');
  t.same(await store.eventDeliveries.nextOfCalls([{ endpointId: 'whe_other', callId: 'call_x' }]), [], 'nothing to another endpoint');
});

onEachBackend(t, 'senders claiming at the same moment never get the same delivery', async (t, { backend, store, reopen }) => {
  await outbox(store, 40);
  // Two processes on PostgreSQL; on SQLite (one file, one writer) the same store twice.
  const other = backend === 'postgres' ? await reopen() : store;
  const rounds = await Promise.all([
    ...Array.from({ length: 4 }, () => claimDue(store, 8, A)),
    ...Array.from({ length: 4 }, () => claimDue(other, 8, B)),
  ]);
  const ids = rounds.flat().map((d) => d.id);
  t.equal(new Set(ids).size, ids.length, `${ids.length} claims, none twice`);
  // Claimers reading the same due rows collide: the first to write gets them, the others nothing.
  t.ok(ids.length >= 8, 'a claimer got its full batch');
  const rest = [...await claimDue(store, 100, A), ...await claimDue(other, 100, B)];
  t.equal(ids.length + rest.length, 40, 'every delivery claimed exactly once');
});

onEachBackend(t, 'the one sender of an outbox checks again what a claim checks, and writes nothing', async (t, { store }) => {
  const tenant = await outbox(store, 0);
  const [first, second, other] = await store.events.append(tenant, [
    { type: 'call.initiated', callId: 'call_x', data: {} }, { type: 'call.ringing', callId: 'call_x', data: {} }, { type: 'call.initiated', callId: 'call_y', data: {} },
  ]);
  const rows = await store.eventDeliveries.dueOf([first!.seq, other!.seq]);
  const [x, y] = [rows.find((d) => d.event_id === first!.id)!, rows.find((d) => d.event_id === other!.id)!];
  const ids = [x.id, y.id];
  t.same([...await store.eventDeliveries.stillDue(ids)].sort(), [...ids].sort(), 'both still due');
  t.equal((await store.eventDeliveries.due(10)).length, 2, 'and nothing claimed');
  await store.eventDeliveries.claim([y.id], B);
  t.same([...await store.eventDeliveries.stillDue(ids)], [x.id], 'one claimed by a sender of a former run is not');
  await store.eventDeliveries.recordAttempt(x, { ok: true, status: 204, durationMs: 5, error: null, responseBody: null, nextAttemptAt: null });
  const [next] = await store.eventDeliveries.nextOfCalls([{ endpointId: x.endpoint_id, callId: 'call_x' }]);
  if (!next) {
    t.fail('the call\'s next delivery is due');
    return;
  }
  t.equal(next.event_id, second!.id);
  t.same([...await store.eventDeliveries.stillDue([x.id, next.id])], [next.id], 'one delivered is not; the call\'s next is');
  await store.webhookEndpoints.update(tenant, x.endpoint_id, { disabled: true });
  t.same([...await store.eventDeliveries.stillDue([next.id])], [], 'nor one whose endpoint is disabled');
  t.same([...await store.eventDeliveries.stillDue([])], []);
});
