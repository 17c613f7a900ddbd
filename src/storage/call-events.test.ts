/**
 * docs/EVENTS.md "Event types" and docs/DECISIONS.md "Call events: the outbox": the engine's call
 * store writes each change's events in the transaction that persists the change, derived from the
 * stored record, so a write refused by the database writes neither, a retried or replayed write
 * causes nothing twice, and the committed events reach the in-process bus.
 */
import t, { type Test } from 'tap';
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { FakeClock } from '../common/clock.js';
import { silentLogger } from '../common/logger.js';
import { SecretBox } from '../common/secret-box.js';
import { callRecord } from '../../test/support/call-records.js';
import { CdrJournal } from './cdr-journal.js';
import { DurableCallStore } from './durable-call-store.js';
import { databasePath, openStore, type EventRecord, type Store } from './index.js';

const policy = { idleMs: 60_000, absoluteMs: 3_600_000 };

async function rig(t: Test) {
  const dir = t.testdir({});
  const clock = new FakeClock(Date.parse('2026-11-26T12:00:00.000Z'));
  const store: Store = await openStore(databasePath(dir), clock, policy, new SecretBox(randomBytes(32)), { busyTimeoutMs: 20 });
  t.teardown(() => store.close());
  const bus: EventRecord[] = [];
  const calls = new DurableCallStore({
    calls: store.calls, transcripts: store.transcripts, transaction: (fn) => store.transaction(fn), journal: new CdrJournal(dir),
    clock, logger: silentLogger(), retryMs: 1000, onEvents: (events) => bus.push(...events),
  });
  const tenant = (await store.tenants.create('acme')).id;
  const logged = async () => (await store.events.list(tenant, {}, { limit: 100 })).items.sort((a, b) => a.seq - b.seq);
  return { dir, store, calls, clock, tenant, bus, logged };
}

t.test('a call\'s life gives its events in order, each with the Call as stored and call.ended with its CDR', async (t) => {
  const { store, calls, tenant, bus, logged } = await rig(t);
  const endpoint = await store.webhookEndpoints.create(tenant, { url: 'https://hooks.example.com/', events: ['*'], description: null, secret: 'whsec_x' });
  const at = '2026-11-26T11:59:00.000Z';
  let call = callRecord(tenant, at, { state: 'initiated', answered_at: null, record: true });
  await calls.insert(call);
  const steps: Partial<typeof call>[] = [
    { state: 'ringing', ringing_at: '2026-11-26T11:59:01.000Z' },
    { state: 'active', answered_at: '2026-11-26T11:59:03.000Z' },
    { conversation_id: 'conv_1' },
    { on_hold: true },
    { on_hold: false },
    { transfer_to: '+15550123', transfer_state: 'dialing', transfer_started_at: '2026-11-26T11:59:10.000Z' },
    { transfer_state: 'failed' },
  ];
  for (const step of steps) calls.save((call = { ...call, ...step }));
  await calls.settled();
  calls.finish({
    call: (call = { ...call, state: 'ended', ended_at: '2026-11-26T11:59:30.000Z', end_reason: 'completed', hangup_by: 'caller', recording_path: 'recordings/a.wav' }),
    transcripts: [{ source: 'gateway', turns: [{ role: 'agent', text: 'bye', offset_s: 1 }] }],
  });
  await calls.settled();
  const events = await logged();
  t.same(events.map((e) => e.type), [
    'call.initiated', 'call.ringing', 'call.answered', 'call.agent.connected', 'call.hold', 'call.unhold',
    'call.transfer.started', 'call.transfer.failed', 'call.ended', 'call.recording.ready', 'call.transcript.ready',
  ]);
  t.same(bus.map((e) => e.id), events.map((e) => e.id), 'every committed event reached the bus, in order');
  const ended = JSON.parse(events.find((e) => e.type === 'call.ended')!.payload) as { data: { call: Record<string, unknown> } };
  t.match(ended.data.call, {
    id: call.id, state: 'ended', end_reason: 'completed', recording: { available: true },
    cdr: { started_at: at, answered_at: '2026-11-26T11:59:03.000Z', ended_at: '2026-11-26T11:59:30.000Z', billable_s: 27, hangup_by: 'caller' },
  });
  t.notOk('session' in ended.data.call, 'no live session in an event');
  t.equal((await store.eventDeliveries.due(100)).length, 1, 'one due to the endpoint at a time: the call\'s first event');
  t.match(await store.eventDeliveries.statesOf(tenant, events.at(-1)!.id), [{ endpoint_id: endpoint.id, state: 'pending' }]);

  calls.finish({ call, transcripts: [] });
  calls.save({ ...call, on_hold: true });
  await calls.settled();
  t.equal((await logged()).length, events.length, 'a final record written again causes nothing twice');
});

t.test('a change the database refuses writes no event; written later, its events come with it, once', async (t) => {
  const { dir, calls, clock, tenant, bus, logged, store } = await rig(t);
  const call = callRecord(tenant, '2026-11-26T11:59:00.000Z', { state: 'ringing', answered_at: null, ringing_at: '2026-11-26T11:59:00.500Z' });
  await calls.insert(call);
  t.same((await logged()).map((e) => e.type), ['call.initiated', 'call.ringing'], 'a call inserted ringing tells both');

  const other = new Database(databasePath(dir));
  t.teardown(() => other.close());
  other.exec('BEGIN EXCLUSIVE');
  calls.save({ ...call, state: 'active', answered_at: '2026-11-26T11:59:02.000Z' });
  await calls.settled();
  t.ok(calls.isFailing, 'the write was refused');
  other.exec('ROLLBACK');
  t.equal((await store.calls.get(tenant, call.id))?.state, 'ringing');
  t.same((await logged()).map((e) => e.type), ['call.initiated', 'call.ringing'], 'no event without its change');
  t.equal(bus.length, 2, 'nothing uncommitted reached the bus');

  clock.advance(1000);
  await calls.settled();
  await calls.retry();
  t.equal((await store.calls.get(tenant, call.id))?.state, 'active');
  t.same((await logged()).map((e) => e.type), ['call.initiated', 'call.ringing', 'call.answered'], 'written with its change, once');
  t.equal(bus.length, 3);
});

t.test('an end by the agent\'s failure is call.agent.failed then call.ended', async (t) => {
  const { calls, tenant, logged } = await rig(t);
  const call = callRecord(tenant, '2026-11-26T11:59:00.000Z', { state: 'initiated', answered_at: null });
  await calls.insert(call);
  calls.finish({ call: { ...call, state: 'ended', ended_at: '2026-11-26T11:59:01.000Z', end_reason: 'agent_unreachable', hangup_by: 'gateway' }, transcripts: [] });
  await calls.settled();
  t.same((await logged()).map((e) => e.type), ['call.initiated', 'call.agent.failed', 'call.ended']);
});
