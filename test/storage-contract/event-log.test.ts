/**
 * Storage contract, docs/EVENTS.md "Event log": the tenant's log read in pages with its filters
 * (one type, a type prefix, one call) and from a sequence number (a stream's Last-Event-ID), the
 * same on both backends. PostgreSQL has to infer the type of each filter's parameter, which an
 * absent filter binds to NULL.
 */
import t from 'tap';
import { onEachBackend } from './contract-rig.js';

onEachBackend(t, "a tenant's event log by page, type, type prefix and call, and after a sequence number", async (t, { store }) => {
  const acme = (await store.tenants.create('Acme')).id;
  const bravo = (await store.tenants.create('Bravo')).id;
  const [initiated, digit, ended] = await store.events.append(acme, [
    { type: 'call.initiated', callId: 'call_1', data: {} },
    { type: 'call.dtmf', callId: 'call_1', data: { digit: '5' } },
    { type: 'call.ended', callId: 'call_2', data: {} },
  ]);
  const ids = (events: readonly { id: string }[]): string[] => events.map((e) => e.id).sort();

  const first = await store.events.list(acme, {}, { limit: 2 });
  t.equal(first.items.length, 2);
  t.not(first.next, null, 'a next page');
  const rest = await store.events.list(acme, {}, { limit: 2, after: first.next! });
  t.same(ids([...first.items, ...rest.items]), ids([initiated!, digit!, ended!]), 'the pages cover the log once');
  t.same(ids((await store.events.list(acme, { type: 'call.dtmf' }, { limit: 10 })).items), [digit!.id], 'one type');
  t.same(ids((await store.events.list(acme, { type: 'call.*' }, { limit: 10 })).items), ids([initiated!, digit!, ended!]), 'a type prefix');
  t.same((await store.events.list(acme, { type: 'call_*' }, { limit: 10 })).items, [], "the prefix's _ is no wildcard");
  t.same(ids((await store.events.list(acme, { callId: 'call_1', type: 'call.*' }, { limit: 10 })).items), ids([initiated!, digit!]), 'one call');
  t.same((await store.events.list(bravo, {}, { limit: 10 })).items, [], "another tenant's log is empty");

  t.same((await store.events.after(acme, initiated!.seq, {}, 10)).map((e) => e.id), [digit!.id, ended!.id], 'after a sequence number, in order');
  t.same((await store.events.after(acme, 0, { type: 'call.ended' }, 10)).map((e) => e.id), [ended!.id], 'with a filter');
  t.same((await store.events.after(acme, 0, { callId: 'call_1' }, 1)).map((e) => e.id), [initiated!.id], 'at most the limit');
  t.equal(await store.events.latestSeq(acme), ended!.seq);
  t.equal(await store.events.latestSeq(bravo), 0);
});
