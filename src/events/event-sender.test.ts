/**
 * docs/EVENTS.md "Delivery", "Order" and "Retries", with a real HTTPS receiver on loopback (a
 * throwaway CA trusted by configuration) and the real store: deliveries are signed and verified
 * (both secrets after a rotation), a call's events arrive in order, a 500 and a time-out are
 * retried with the same VGW-Event-Id until delivered, a dead endpoint of one tenant does not delay
 * another tenant's events, and an endpoint whose name now resolves to a private address is refused
 * at delivery without a byte sent, and two senders on one outbox (two engines) send each event
 * once, in order per call, a restarted one resending at once what it had in flight, while the one
 * sender of an outbox writes no claim and still sends only what is due. Storage time
 * is a fake clock, advanced to make retries due.
 */
import t, { type Test } from 'tap';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { FakeClock } from '../common/clock.js';
import { silentLogger } from '../common/logger.js';
import { OutboundAddressPolicy, type HostResolver } from '../common/outbound-policy.js';
import { SecretBox } from '../common/secret-box.js';
import type { TenantId } from '../common/ids.js';
import { databasePath, openStore, type Store } from '../storage/index.js';
import { startHttpsFixture } from '../../test/support/https-fixture.js';
import { EndpointSender } from './endpoint-sender.js';
import { CLAIM_MS, EventSender, type DeliveryAttempted, type EventSenderLimits, type EventSenderOptions } from './event-sender.js';
import { verifyDelivery } from './signature.js';

interface Received { id: string; type: string; callId: string; signature: string; raw: string; at: number }

const toLoopback: HostResolver = () => Promise.resolve([{ address: '127.0.0.1', family: 4 }]);
const allowLoopback = new OutboundAddressPolicy({ allowPrivate: false, allowedPrivateNetworks: ['127.0.0.1'] });

interface RigOptions {
  limits?: Partial<EventSenderLimits>;
  timeoutMs?: number;
  resolve?: HostResolver;
  policy?: OutboundAddressPolicy;
  /** Called on each scan of the outbox (`due`). */
  onScan?: () => void;
  pollMs?: number;
  /** The sender is the outbox's only one (the `all` role): no claims. */
  ownsOutbox?: boolean;
  /** Awaited before each write of outcomes (a slow store). */
  beforeRecord?: () => Promise<void>;
  observe?: EventSenderOptions['observe'];
}

async function rig(t: Test, options: RigOptions = {}) {
  const clock = new FakeClock(Date.parse('2026-11-26T12:00:00.000Z'));
  const store: Store = await openStore(databasePath(t.testdir({})), clock, { idleMs: 60_000, absoluteMs: 3_600_000 }, new SecretBox(randomBytes(32)));
  t.teardown(() => store.close());
  const sender = (ca: string, nodeId = 'engine-a') => {
    const { eventDeliveries } = store;
    const deliveries: EventSenderOptions['deliveries'] = {
      scan: (...a) => { options.onScan?.(); return eventDeliveries.scan(...a); },
      dueOf: (...a) => eventDeliveries.dueOf(...a), nextOfCalls: (...a) => eventDeliveries.nextOfCalls(...a), claim: (...a) => eventDeliveries.claim(...a),
      stillDue: (...a) => eventDeliveries.stillDue(...a), releaseClaims: (...a) => eventDeliveries.releaseClaims(...a), recordAttempts: async (...a) => { await options.beforeRecord?.(); return eventDeliveries.recordAttempts(...a); },
    };
    const worker = new EventSender({
      deliveries, nodeId, ownsOutbox: options.ownsOutbox ?? false, endpoints: store.webhookEndpoints, events: store.events, clock, logger: silentLogger(),
      sender: new EndpointSender({ policy: options.policy ?? allowLoopback, allowHttp: false, ca, resolve: options.resolve ?? toLoopback, timeoutMs: options.timeoutMs ?? 2000 }),
      limits: { total: 64, perTenant: 8, perEndpoint: 2, perHealthyEndpoint: 8, ...options.limits }, pollMs: options.pollMs ?? 60_000, flagAfter: 3, retentionMs: 30 * 86_400_000, random: () => 0,
      ...(options.observe ? { observe: options.observe } : {}),
    });
    t.teardown(() => worker.stop());
    return worker;
  };
  return { store, clock, sender };
}

/** A receiver that records each delivery and answers with `answer(n, delivery)` (n from 1), or never when it returns null. */
async function receiver(t: Test, answer: (n: number, got: Received) => number | null | Promise<number | null>) {
  const got: Received[] = [];
  const fixture = await startHttpsFixture(t, (req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (d: Buffer) => { raw += d.toString(); });
    req.on('end', () => {
      const envelope = JSON.parse(raw) as { id: string; type: string; data: { call?: { id: string } } };
      const delivery = { id: String(req.headers['vgw-event-id']), type: String(req.headers['vgw-event-type']), callId: envelope.data.call?.id ?? '', signature: String(req.headers['vgw-signature']), raw, at: performance.now() };
      got.push(delivery);
      void Promise.resolve(answer(got.length, delivery)).then((status) => { if (status !== null) res.writeHead(status).end('ok'); });
    });
  });
  return { fixture, got };
}

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const appendCallEvents = (store: Store, tenant: TenantId, callId: string, types: ('call.initiated' | 'call.ringing' | 'call.answered' | 'call.ended')[]) =>
  store.events.append(tenant, types.map((type) => ({ type, callId, data: { call: { id: callId } } })));

t.test('deliveries are signed with both secrets after a rotation, and a call\'s next event waits for its previous one', async (t) => {
  const { store, clock, sender } = await rig(t);
  // call_a's first event fails once: its later events must wait for its retry, call_b's must not.
  let failedOnce = false;
  const { fixture, got } = await receiver(t, (_n, d) => {
    if (d.callId === 'call_a' && d.type === 'call.initiated' && !failedOnce) {
      failedOnce = true;
      return 500;
    }
    return 204;
  });
  const tenant = (await store.tenants.create('acme')).id;
  const endpoint = await store.webhookEndpoints.create(tenant, { url: fixture.url('/events'), events: ['*'], description: null, secret: 'whsec_old' });
  await store.webhookEndpoints.rotateSecret(tenant, endpoint.id, 'whsec_new');
  const types = ['call.initiated', 'call.ringing', 'call.answered', 'call.ended'] as const;
  const sent = [...await appendCallEvents(store, tenant, 'call_a', [...types]), ...await appendCallEvents(store, tenant, 'call_b', [...types])];
  const worker = sender(fixture.ca);
  worker.start();
  await until('call_b\'s events', () => got.filter((d) => d.callId === 'call_b').length === 4);
  await until('idle', () => worker.inFlight === 0);
  t.same(got.filter((d) => d.callId === 'call_a').map((d) => d.type), ['call.initiated'], 'call_a\'s next events wait for its first');
  clock.advance(5_000);
  worker.wake();
  await until('call_a\'s events', () => got.filter((d) => d.callId === 'call_a').length === 5);
  for (const callId of ['call_a', 'call_b']) {
    t.same([...new Set(got.filter((d) => d.callId === callId).map((d) => d.type))], [...types], `${callId} in order`);
  }
  const nowS = Math.floor(Date.now() / 1000);
  for (const d of got) {
    t.same(verifyDelivery(d.signature, 'whsec_new', d.raw, nowS), { valid: true });
    t.same(verifyDelivery(d.signature, 'whsec_old', d.raw, nowS), { valid: true }, 'the old secret still verifies during the rotation');
    t.equal(d.raw, sent.find((e) => e.id === d.id)!.payload, 'the body is the stored envelope');
  }
  await until('all recorded', async () => (await store.eventDeliveries.due(100)).length === 0 && worker.inFlight === 0);
  for (const e of sent) t.match(await store.eventDeliveries.statesOf(tenant, e.id), [{ state: 'delivered' }]);
});

t.test('events offered as they are written are sent without a scan of the outbox, each call\'s in order, past the tenant\'s limit', async (t) => {
  let scans = 0;
  const { store, sender } = await rig(t, { limits: { perTenant: 2 }, onScan: () => { scans++; } });
  const { fixture, got } = await receiver(t, () => 204);
  const tenant = (await store.tenants.create('acme')).id;
  await store.webhookEndpoints.create(tenant, { url: fixture.url('/events'), events: ['*'], description: null, secret: 'whsec_a' });
  const worker = sender(fixture.ca);
  worker.start();
  await until('the start\'s scan', () => scans > 0);
  await until('idle', () => worker.inFlight === 0);
  const scansAtStart = scans;
  const calls = Array.from({ length: 6 }, (_, i) => `call_${i}`);
  for (const callId of calls) for (const event of await appendCallEvents(store, tenant, callId, ['call.initiated', 'call.answered', 'call.ended'])) worker.offer(event.seq);
  await until('every event', () => got.length === 18);
  for (const callId of calls) t.same(got.filter((d) => d.callId === callId).map((d) => d.type), ['call.initiated', 'call.answered', 'call.ended'], `${callId} in order`);
  t.equal(scans, scansAtStart, 'no scan: new events read by their seq, each call\'s next one once its previous was delivered');
});

t.test('a retry comes due while new events keep the sender busy: the scan on its timer is not put off by them', async (t) => {
  const { store, clock, sender } = await rig(t, { pollMs: 1_000 });
  const { fixture, got } = await receiver(t, (n) => (n === 1 ? 500 : 204));
  const tenant = (await store.tenants.create('acme')).id;
  await store.webhookEndpoints.create(tenant, { url: fixture.url('/events'), events: ['*'], description: null, secret: 'whsec_a' });
  const worker = sender(fixture.ca);
  worker.start();
  const [first] = await appendCallEvents(store, tenant, 'call_0', ['call.ended']);
  worker.offer(first!.seq);
  await until('the first attempt failed', () => got.length === 1);
  // Every half poll period a new call's event: the sender is never idle for a whole period.
  for (let i = 1; i <= 40 && got.filter((d) => d.id === first!.id).length < 2; i++) {
    for (const event of await appendCallEvents(store, tenant, `call_${i}`, ['call.ended'])) worker.offer(event.seq);
    await until(`call_${i}'s event`, () => got.some((d) => d.callId === `call_${i}`));
    clock.advance(500);
  }
  t.equal(got.filter((d) => d.id === first!.id).length, 2, 'the retry was sent within 20 s of events');
});

t.test('a 500 and a time-out are retried with the same VGW-Event-Id until delivered; each attempt is logged and observed', async (t) => {
  const observed: DeliveryAttempted[] = [];
  const { store, clock, sender } = await rig(t, { timeoutMs: 300, observe: (a) => observed.push(a) });
  const { fixture, got } = await receiver(t, (n) => (n === 1 ? 500 : n === 2 ? null : 204));
  const tenant = (await store.tenants.create('acme')).id;
  const endpoint = await store.webhookEndpoints.create(tenant, { url: fixture.url('/events'), events: ['*'], description: null, secret: 'whsec_a' });
  const [event] = await appendCallEvents(store, tenant, 'call_a', ['call.ended']);
  const worker = sender(fixture.ca);
  worker.start();
  const attempts = async () => (await store.eventDeliveries.attempts(tenant, endpoint.id, { limit: 10 })).items;
  await until('the first attempt', async () => (await attempts()).length === 1);
  clock.advance(5_000);
  worker.wake();
  await until('the second attempt', async () => (await attempts()).length === 2);
  t.equal(got.length, 2, 'not retried before its time');
  clock.advance(10_000);
  worker.wake();
  await until('the third attempt', async () => (await attempts()).length === 3);
  t.same(got.map((d) => d.id), [event!.id, event!.id, event!.id], 'the same event id each time');
  t.same((await attempts()).map((a) => [a.attempt, a.ok, a.status, a.error]).reverse(), [
    [1, false, 500, 'answered 500'], [2, false, null, 'no answer within 300 ms'], [3, true, 204, null],
  ]);
  t.match(await store.eventDeliveries.statesOf(tenant, event!.id), [{ state: 'delivered', attempts: 3 }]);
  t.same(observed, [{ state: 'pending', sinceMs: 0 }, { state: 'pending', sinceMs: 5_000 }, { state: 'delivered', sinceMs: 15_000 }], 'each attempt observed with the time since the event');
});

t.test('a dead endpoint of tenant A does not delay tenant B\'s events, and holds fewer slots once its attempts fail', async (t) => {
  const { store, sender } = await rig(t, { timeoutMs: 3000, limits: { perTenant: 4, perEndpoint: 2, perHealthyEndpoint: 3, total: 16 } });
  const dead = await receiver(t, () => null);
  const live = await receiver(t, () => 204);
  const a = (await store.tenants.create('a')).id;
  const b = (await store.tenants.create('b')).id;
  await store.webhookEndpoints.create(a, { url: dead.fixture.url('/dead'), events: ['*'], description: null, secret: 'whsec_a' });
  await store.webhookEndpoints.create(b, { url: live.fixture.url('/live'), events: ['*'], description: null, secret: 'whsec_b' });
  for (let i = 0; i < 40; i++) await appendCallEvents(store, a, `call_a${i}`, ['call.initiated']);
  const worker = sender(dead.fixture.ca);
  worker.start();
  await until('tenant A\'s endpoint is hit', () => dead.got.length >= 2);
  const started = performance.now();
  await appendCallEvents(store, b, 'call_b', ['call.initiated', 'call.answered']);
  worker.wake();
  await until('tenant B\'s events', () => live.got.length >= 2);
  const waited = performance.now() - started;
  t.ok(waited < 3000, `B's events arrived in ${Math.round(waited)} ms, before A's first time-out (3000 ms) freed a slot`);
  t.equal(dead.got.length, 3, 'A\'s endpoint, new and so healthy, holds 3 slots');
  await until('A\'s first attempts time out and the next start', () => dead.got.length >= 5, 10_000);
  await new Promise((r) => setTimeout(r, 1000));
  t.equal(dead.got.length, 5, 'after a failed attempt, 2 at a time');
});

t.test('docs/SECURITY.md "Outbound addresses": a name that resolves to a private address at delivery is refused, nothing sent', async (t) => {
  let answers = 0;
  // The name was public when the endpoint was created; it now answers a private address.
  const changing: HostResolver = () => Promise.resolve([{ address: answers++ === 0 ? '93.184.216.34' : '10.0.0.5', family: 4 }]);
  const { store, sender } = await rig(t, { resolve: changing, policy: new OutboundAddressPolicy({ allowPrivate: false }) });
  answers = 1;
  const { fixture, got } = await receiver(t, () => 204);
  const tenant = (await store.tenants.create('acme')).id;
  const endpoint = await store.webhookEndpoints.create(tenant, { url: fixture.url('/events'), events: ['*'], description: null, secret: 'whsec_a' });
  await appendCallEvents(store, tenant, 'call_a', ['call.initiated']);
  sender(fixture.ca).start();
  const attempts = async () => (await store.eventDeliveries.attempts(tenant, endpoint.id, { limit: 10 })).items;
  await until('the attempt', async () => (await attempts()).length === 1);
  t.match((await attempts())[0], { ok: false, status: null, error: /^endpoint address refused/ });
  t.equal(got.length, 0, 'nothing reached the receiver');
});

t.test('docs/CLUSTER.md "Call events from several engines": two senders on one outbox send each event once, in order per call', async (t) => {
  const { store, sender } = await rig(t, { limits: { perTenant: 8, perEndpoint: 8, total: 16 } });
  const { fixture, got } = await receiver(t, () => 204);
  const tenant = (await store.tenants.create('acme')).id;
  await store.webhookEndpoints.create(tenant, { url: fixture.url('/events'), events: ['*'], description: null, secret: 'whsec_a' });
  const types = ['call.initiated', 'call.ringing', 'call.answered', 'call.ended'] as const;
  for (let i = 0; i < 10; i++) await appendCallEvents(store, tenant, `call_${i}`, [...types]);
  const a = sender(fixture.ca, 'engine-a');
  const b = sender(fixture.ca, 'engine-b');
  a.start();
  b.start();
  await until('every event delivered', async () => (await store.eventDeliveries.due(100)).length === 0 && a.inFlight === 0 && b.inFlight === 0 && got.length >= 40);
  t.equal(got.length, 40, 'forty events, forty deliveries');
  t.equal(new Set(got.map((d) => d.id)).size, 40, 'none sent twice');
  for (let i = 0; i < 10; i++) t.same(got.filter((d) => d.callId === `call_${i}`).map((d) => d.type), [...types], `call_${i} in order`);
});

t.test('a restarted sender resends at once what its previous run had in flight; another sender waits for the claim to run out', async (t) => {
  const { store, clock, sender } = await rig(t);
  const { fixture, got } = await receiver(t, () => 204);
  const tenant = (await store.tenants.create('acme')).id;
  await store.webhookEndpoints.create(tenant, { url: fixture.url('/events'), events: ['*'], description: null, secret: 'whsec_a' });
  const [mine] = await appendCallEvents(store, tenant, 'call_a', ['call.initiated']);
  const [theirs] = await appendCallEvents(store, tenant, 'call_b', ['call.initiated']);
  // What a kill -9 leaves: engine-a and engine-c had one delivery each in flight.
  const claimNext = async (by: string) => (await store.eventDeliveries.claim((await store.eventDeliveries.due(1)).map((d) => d.id), { by, forMs: CLAIM_MS })).size;
  t.equal(await claimNext('engine-a'), 1);
  t.equal(await claimNext('engine-c'), 1);
  const restarted = sender(fixture.ca, 'engine-a');
  restarted.start();
  await until('engine-a\'s delivery resent', () => got.length === 1);
  t.equal(got[0]!.id, mine!.id, 'its own, at once');
  await until('idle', () => restarted.inFlight === 0);
  restarted.wake();
  await new Promise((r) => setTimeout(r, 300));
  t.equal(got.length, 1, 'engine-c\'s claim still runs');
  clock.advance(CLAIM_MS);
  restarted.wake();
  await until('engine-c\'s delivery taken over', () => got.length === 2);
  t.equal(got[1]!.id, theirs!.id);
});

t.test('the one sender of an outbox writes no claim, and still starts only deliveries that are due as they start', async (t) => {
  const { store, sender } = await rig(t, { ownsOutbox: true, limits: { perEndpoint: 1, perHealthyEndpoint: 1 } });
  const answers: (() => void)[] = [];
  const { fixture, got } = await receiver(t, () => new Promise<number>((resolve) => answers.push(() => resolve(204))));
  const tenant = (await store.tenants.create('acme')).id;
  const endpoint = await store.webhookEndpoints.create(tenant, { url: fixture.url('/events'), events: ['*'], description: null, secret: 'whsec_a' });
  const worker = sender(fixture.ca);
  worker.start();
  const [first] = await appendCallEvents(store, tenant, 'call_a', ['call.initiated']);
  worker.offer(first!.seq);
  await until('call_a\'s event in flight', () => answers.length === 1);
  t.same((await store.eventDeliveries.due(10)).map((d) => d.event_id), [first!.id], 'in flight and unclaimed: storage still reads it as due');
  // call_b's event is read and held (one in flight per endpoint); the endpoint is disabled before it can start.
  const [second] = await appendCallEvents(store, tenant, 'call_b', ['call.initiated']);
  worker.offer(second!.seq);
  await new Promise((r) => setTimeout(r, 100));
  await store.webhookEndpoints.update(tenant, endpoint.id, { disabled: true });
  answers.shift()!();
  await until('idle', () => worker.inFlight === 0);
  await new Promise((r) => setTimeout(r, 200));
  t.same(got.map((d) => d.id), [first!.id], 'the held delivery was checked again and not sent to the disabled endpoint');
  await store.webhookEndpoints.update(tenant, endpoint.id, { disabled: false });
  worker.wake();
  await until('call_b\'s event once enabled again', () => got.length === 2 && answers.length === 1);
  answers.shift()!();
  await until('idle', () => worker.inFlight === 0);
  t.same(got.map((d) => d.id), [first!.id, second!.id], 'each once');
});

t.test('an answer frees its slot before its outcome is written, and the delivery answered is not sent again meanwhile', async (t) => {
  let open: () => void = () => undefined;
  let gate: Promise<void> | null = new Promise<void>((resolve) => { open = resolve; });
  const { store, sender } = await rig(t, { ownsOutbox: true, limits: { perEndpoint: 1, perHealthyEndpoint: 1 }, beforeRecord: () => gate ?? Promise.resolve() });
  const { fixture, got } = await receiver(t, () => 204);
  const tenant = (await store.tenants.create('acme')).id;
  await store.webhookEndpoints.create(tenant, { url: fixture.url('/events'), events: ['*'], description: null, secret: 'whsec_a' });
  const [first] = await appendCallEvents(store, tenant, 'call_a', ['call.initiated']);
  const [second] = await appendCallEvents(store, tenant, 'call_b', ['call.initiated']);
  const worker = sender(fixture.ca);
  worker.start();
  // One slot for the endpoint: call_b's event goes out while call_a's outcome is still unwritten.
  await until('both sent', () => got.length === 2);
  t.same(got.map((d) => d.id), [first!.id, second!.id]);
  t.equal((await store.eventDeliveries.due(10)).length, 2, 'both outcomes still unwritten: storage reads both as due');
  worker.wake();
  await new Promise((r) => setTimeout(r, 300));
  t.equal(got.length, 2, 'a scan meanwhile starts neither again');
  t.ok(worker.inFlight > 0, 'and the sender is not idle until they are written');
  gate = null;
  open();
  await until('idle', () => worker.inFlight === 0);
  t.same(await store.eventDeliveries.due(10), [], 'both recorded delivered');
  t.equal(got.length, 2, 'each sent once');
});
