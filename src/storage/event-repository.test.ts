/**
 * docs/EVENTS.md "Endpoints", "Event log", "Order" and "Retries", on the real store (SQLite
 * file): the secret sealed at rest and two secrets in force for 24 hours after a rotation, tenant
 * isolation, fan-out to subscribed endpoints only (`call.dtmf` opt-in), a call's next event held
 * until its previous one to the same endpoint is settled, redelivery, and retention.
 */
import t, { type Test } from 'tap';
import { randomBytes } from 'node:crypto';
import { FakeClock } from '../common/clock.js';
import { SecretBox } from '../common/secret-box.js';
import { databasePath, openStore, type Store } from './index.js';
import { sqliteOf } from '../../test/support/sqlite-of.js';

const policy = { idleMs: 60_000, absoluteMs: 3_600_000 };

async function rig(t: Test): Promise<{ store: Store; clock: FakeClock }> {
  const clock = new FakeClock(Date.parse('2026-11-26T12:00:00.000Z'));
  const store = await openStore(databasePath(t.testdir({})), clock, policy, new SecretBox(randomBytes(32)));
  t.teardown(() => store.close());
  return { store, clock };
}

const SECRET_A = 'whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
const SECRET_B = 'whsec_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB';

t.test('the secret is sealed at rest; after a rotation both sign for 24 hours; another tenant sees nothing', async (t) => {
  const { store, clock } = await rig(t);
  const acme = (await store.tenants.create('acme')).id;
  const bravo = (await store.tenants.create('bravo')).id;
  const endpoint = await store.webhookEndpoints.create(acme, { url: 'https://hooks.example.com/a', events: ['*'], description: null, secret: SECRET_A });
  t.match(endpoint, { id: /^whe_/, url: 'https://hooks.example.com/a', events: ['*'], disabled: false });
  t.notOk('secret' in endpoint, 'the record carries no secret');
  const raw = sqliteOf(store).prepare('SELECT * FROM webhook_endpoints').all();
  t.notOk(JSON.stringify(raw).includes(SECRET_A.slice(6)), 'the file never holds the secret in clear');
  t.same(await store.webhookEndpoints.secrets(acme, endpoint.id), [SECRET_A]);

  await store.webhookEndpoints.rotateSecret(acme, endpoint.id, SECRET_B);
  t.same(await store.webhookEndpoints.secrets(acme, endpoint.id), [SECRET_B, SECRET_A], 'newest first, the old one still signs');
  clock.advance(24 * 3_600_000 - 1000);
  t.same(await store.webhookEndpoints.secrets(acme, endpoint.id), [SECRET_B, SECRET_A]);
  clock.advance(2000);
  t.same(await store.webhookEndpoints.secrets(acme, endpoint.id), [SECRET_B], 'the old secret stops signing after 24 hours');

  t.equal(await store.webhookEndpoints.get(bravo, endpoint.id), undefined);
  t.equal(await store.webhookEndpoints.secrets(bravo, endpoint.id), undefined);
  t.equal(await store.webhookEndpoints.update(bravo, endpoint.id, { disabled: true }), undefined);
  t.equal(await store.webhookEndpoints.rotateSecret(bravo, endpoint.id, SECRET_A), undefined);
  t.equal(await store.webhookEndpoints.delete(bravo, endpoint.id), false);
  t.same((await store.webhookEndpoints.list(bravo, { limit: 10 })).items, []);
  t.equal((await store.webhookEndpoints.list(acme, { limit: 10 })).items.length, 1);
});

t.test('an event gets a delivery for each enabled endpoint of its tenant that subscribes to it; call.dtmf only when named', async (t) => {
  const { store } = await rig(t);
  const acme = (await store.tenants.create('acme')).id;
  const bravo = (await store.tenants.create('bravo')).id;
  const all = await store.webhookEndpoints.create(acme, { url: 'https://a.example.com/', events: ['*'], description: null, secret: SECRET_A });
  const dtmf = await store.webhookEndpoints.create(acme, { url: 'https://b.example.com/', events: ['call.dtmf', 'call.ended'], description: null, secret: SECRET_A });
  const off = await store.webhookEndpoints.create(acme, { url: 'https://c.example.com/', events: ['*'], description: null, secret: SECRET_A });
  await store.webhookEndpoints.update(acme, off.id, { disabled: true });
  await store.webhookEndpoints.create(bravo, { url: 'https://d.example.com/', events: ['*'], description: null, secret: SECRET_A });

  const [answered, digit, ended] = await store.transaction((tx) => tx.events.append(acme, [
    { type: 'call.answered', callId: 'call_1', data: { call: { id: 'call_1' } } },
    { type: 'call.dtmf', callId: 'call_1', data: { digit: '5' } },
    { type: 'call.ended', callId: 'call_1', data: { call: { id: 'call_1' } } },
  ]));
  t.match(answered, { id: /^evt_/, type: 'call.answered' });
  t.match(JSON.parse(answered!.payload), { id: answered!.id, type: 'call.answered', api_version: '1.0.0', data: { call: { id: 'call_1' } } });
  // Which endpoints, not in which order: endpoints created in the same millisecond have no order.
  const endpointsOf = async (id: string) => (await store.eventDeliveries.statesOf(acme, id)).map((d) => d.endpoint_id).sort();
  t.same(await endpointsOf(answered!.id), [all.id]);
  t.same(await endpointsOf(digit!.id), [dtmf.id], '`*` does not include call.dtmf');
  t.same(await endpointsOf(ended!.id), [all.id, dtmf.id].sort());
  t.ok(answered!.seq < digit!.seq && digit!.seq < ended!.seq, 'the log keeps their order');

  const page = await store.events.list(acme, { type: 'call.*' }, { limit: 2 });
  t.equal(page.items.length, 2);
  t.not(page.next, null);
  const rest = await store.events.list(acme, { type: 'call.*' }, { limit: 2, after: page.next! });
  t.equal(new Set([...page.items, ...rest.items].map((e) => e.id)).size, 3, 'pages cover the log once');
  t.same((await store.events.list(acme, { type: 'call.dtmf' }, { limit: 10 })).items.map((e) => e.id), [digit!.id]);
  t.same((await store.events.list(acme, { callId: 'call_2' }, { limit: 10 })).items, []);
  t.same((await store.events.list(bravo, {}, { limit: 10 })).items, [], 'another tenant\'s log is empty');
  t.equal(await store.events.get(bravo, answered!.id), undefined);
  t.same((await store.events.after(acme, answered!.seq, {}, 10)).map((e) => e.id), [digit!.id, ended!.id], 'resumption after a sequence number');
});

t.test('a call\'s next event waits for its previous one to the same endpoint; retries, failure for good, redelivery', async (t) => {
  const { store, clock } = await rig(t);
  const acme = (await store.tenants.create('acme')).id;
  const endpoint = await store.webhookEndpoints.create(acme, { url: 'https://a.example.com/', events: ['*'], description: null, secret: SECRET_A });
  const [first, second] = await store.events.append(acme, [
    { type: 'call.initiated', callId: 'call_1', data: {} },
    { type: 'call.ringing', callId: 'call_1', data: {} },
  ]);
  const [other] = await store.events.append(acme, [{ type: 'call.initiated', callId: 'call_2', data: {} }]);
  let due = await store.eventDeliveries.due(10);
  t.same(due.map((d) => d.event_id), [first!.id, other!.id], 'call_1\'s second event is held behind its first');
  const capped = await store.eventDeliveries.scan(10, { perTenant: 10, perEndpoint: 1 });
  t.same(capped.due.map((d) => d.event_id), [first!.id], 'at most the cap of an endpoint');
  t.same([...capped.unread], [[endpoint.id, acme]], 'and the endpoint is named as read only in part');
  t.same((await store.eventDeliveries.scan(10, { perTenant: 10, perEndpoint: 10 })).unread.size, 0, 'read whole: none named');

  const retryAt = new Date(clock.now() + 5000).toISOString();
  t.equal(await store.eventDeliveries.recordAttempt(due[0]!, { ok: false, status: 500, durationMs: 12, error: 'answered 500', responseBody: 'oops', nextAttemptAt: retryAt }), 'pending');
  due = await store.eventDeliveries.due(10);
  t.same(due.map((d) => d.event_id), [other!.id], 'the first waits for its retry and still holds the second');
  clock.advance(5000);
  due = await store.eventDeliveries.due(10);
  t.same(due.map((d) => [d.event_id, d.attempts]), [[other!.id, 0], [first!.id, 1]], 'oldest due first');
  const retried = due.find((d) => d.event_id === first!.id)!;
  t.equal(await store.eventDeliveries.recordAttempt(retried, { ok: true, status: 204, durationMs: 8, error: null, responseBody: '', nextAttemptAt: null }), 'delivered');
  t.same((await store.eventDeliveries.due(10)).map((d) => d.event_id), [second!.id, other!.id], 'delivered: the next one is due (due as long, written first)');
  t.equal(await store.eventDeliveries.recordAttempt(retried, { ok: true, status: 204, durationMs: 8, error: null, responseBody: '', nextAttemptAt: null }), undefined, 'a settled delivery is not recorded twice');

  const attempts = await store.eventDeliveries.attempts(acme, endpoint.id, { limit: 10 });
  t.same(attempts.items.map((a) => [a.event_id, a.attempt, a.ok, a.status]), [[first!.id, 2, true, 204], [first!.id, 1, false, 500]]);
  t.match(attempts.items[1], { error: 'answered 500', response_body: 'oops', next_attempt_at: retryAt, duration_ms: 12 });

  const d2 = (await store.eventDeliveries.due(10)).find((d) => d.event_id === second!.id);
  t.equal(await store.eventDeliveries.recordAttempt(d2!, { ok: false, status: null, durationMs: 1, error: 'ECONNREFUSED', responseBody: null, nextAttemptAt: null }), 'failed');
  t.match(await store.eventDeliveries.statesOf(acme, second!.id), [{ state: 'failed', attempts: 1 }]);
  t.equal(await store.eventDeliveries.redeliver(acme, second!.id), 1);
  t.match(await store.eventDeliveries.statesOf(acme, second!.id), [{ state: 'pending', attempts: 1 }]);
  t.ok((await store.eventDeliveries.due(10)).some((d) => d.event_id === second!.id), 'due again now');
  t.equal(await store.eventDeliveries.redeliver((await store.tenants.create('bravo')).id, second!.id), 0, 'another tenant cannot redeliver it');
});

t.test('events past the retention go, with their deliveries', async (t) => {
  const { store, clock } = await rig(t);
  const acme = (await store.tenants.create('acme')).id;
  await store.webhookEndpoints.create(acme, { url: 'https://a.example.com/', events: ['*'], description: null, secret: SECRET_A });
  const [old] = await store.events.append(acme, [{ type: 'call.initiated', callId: 'call_1', data: {} }]);
  clock.advance(31 * 86_400_000);
  const [recent] = await store.events.append(acme, [{ type: 'call.initiated', callId: 'call_2', data: {} }]);
  t.equal(await store.events.deleteBefore(new Date(clock.now() - 30 * 86_400_000).toISOString()), 1);
  t.equal(await store.events.get(acme, old!.id), undefined);
  t.ok(await store.events.get(acme, recent!.id));
  t.same((await store.eventDeliveries.due(10)).map((d) => d.event_id), [recent!.id], 'the old event\'s delivery went with it');
});
