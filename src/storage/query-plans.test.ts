import t from 'tap';
import { FakeClock } from '../common/clock.js';
import { openDatabase, type Db } from './database.js';
import { CallRepository } from './call-repository.js';
import { IdempotencyRepository } from './idempotency-repository.js';
import { NumberRepository } from './number-repository.js';
import { RecordingRepository } from './recording-repository.js';
import { SessionRepository } from './session-repository.js';
import { SipTraceRepository } from './sip-trace-repository.js';
import { TranscriptRepository } from './transcript-repository.js';
import { WebhookRepository } from './webhook-repository.js';
import { EventRepository } from './event-repository.js';
import { EventDeliveryRepository } from './event-delivery-repository.js';
import { SqliteDatabase } from './sql/sqlite-database.js';
import type { TenantId } from '../common/ids.js';
import { callRecord } from '../../test/support/call-records.js';

/** Tables that grow with every call or request: a statement that scans one slows down as the gateway ages. */
const GROWING = ['calls', 'transcripts', 'webhook_deliveries', 'recordings', 'idempotency_keys', 'sessions', 'sip_traces'];
/** Partial indexes that hold only live rows, so reading one whole is bounded by the calls up now. */
const BOUNDED = ['calls_unfinished', 'calls_tenant_live'];

/** Opens a migrated database and records the text of every statement prepared on it. */
function recordingDatabase(): { db: Db; statements: Set<string> } {
  const db = openDatabase(':memory:');
  const statements = new Set<string>();
  const prepare = db.prepare.bind(db);
  db.prepare = (sql: string) => {
    statements.add(sql);
    return prepare(sql);
  };
  return { db, statements };
}

const T = 'ten_x' as TenantId;

/**
 * Runs every read and write of the repositories on growing tables once, so each statement is
 * prepared (the SQLite adapter prepares a statement on its first use). Failures (a foreign key,
 * an empty table) do not matter: the statement was prepared before it ran.
 */
async function exercise(raw: Db): Promise<void> {
  const db = new SqliteDatabase(raw);
  const clock = new FakeClock();
  const ignore = async (work: Promise<unknown>): Promise<void> => { await work.catch(() => undefined); };
  const after = { createdAt: 'x', id: 'x' };
  for (const calls of [new CallRepository(db), new CallRepository(db, { liveList: 'database' })]) {
    const call = callRecord(T, '2026-01-01T00:00:00.000Z');
    await ignore(calls.save(call));
    await ignore(calls.get(T, 'x'));
    await ignore(calls.getByControlId(T, 'x'));
    await ignore(calls.list(T, { state: 'ended', endedSince: 'x' }, { limit: 5, after }));
    await ignore(calls.list(T, {}, { limit: 5, after }));
    await ignore(calls.unfinished());
    await ignore(calls.unfinished('node'));
    await ignore(calls.ownerOf(T, 'x'));
    await ignore(calls.ownerOfControlId(T, 'x'));
  }
  const transcripts = new TranscriptRepository(db, clock);
  await ignore(transcripts.sources(T, 'x'));
  await ignore(transcripts.get(T, 'x', 'provider'));
  const webhooks = new WebhookRepository(db, clock);
  await ignore(webhooks.isDelivered(T, 'x'));
  await ignore(webhooks.isRepeatedConflict(T, 'x', 'x', 'x'));
  await ignore(webhooks.callDeliveries(T, 'x'));
  await ignore(webhooks.keptRawBytes(T, 'x'));
  await ignore(webhooks.attributedConversation('p', 'x'));
  await ignore(webhooks.routedCalls({ provider: 'p', agentNumber: 'x', remoteNumber: 'x', externalAgentId: null, direction: null, endedFrom: 'x', endedTo: 'x' }));
  await ignore(webhooks.callsWithConversation('p', 'x', 'x', 'x'));
  await ignore(webhooks.setConversationId(T, 'x', 'x'));
  const recordings = new RecordingRepository(db, clock);
  await ignore(recordings.get(T, 'x', 'provider'));
  await ignore(recordings.byPath(T, 'x', 'x'));
  await ignore(recordings.save({ call_id: 'x', tenant_id: T, source: 'provider', path: 'x', media_type: 'x', bytes: 1, sha256: 'x', origin: 'inline' }));
  const idempotency = new IdempotencyRepository(db, clock);
  await ignore(idempotency.reserve(T, 'x', 'x'));
  await ignore(idempotency.complete(T, 'x', 200, '{}'));
  await ignore(idempotency.release(T, 'x'));
  const sessions = new SessionRepository(db, clock, { idleMs: 60_000, absoluteMs: 3_600_000 });
  await ignore(sessions.authenticate('x'.repeat(40)));
  await ignore(sessions.revoke('x'.repeat(40)));
  const traces = new SipTraceRepository(db);
  await ignore(traces.get(T, 'x'));
  await ignore(traces.expire('x'));
  const numbers = new NumberRepository(db, clock);
  await ignore(numbers.list(T, { limit: 5 }));
  await ignore(numbers.list(null, { limit: 5 }));
}

/** EXPLAIN QUERY PLAN of `sql` with every parameter bound to a text value. */
function planOf(db: Db, sql: string): string[] {
  const names = [...sql.matchAll(/@(\w+)/g)].map((m) => m[1]!);
  const positional = (sql.match(/\?/g) ?? []).length;
  const statement = db.prepare(`EXPLAIN QUERY PLAN ${sql}`);
  const args: unknown[] = Array.from({ length: positional }, () => 'x');
  if (names.length > 0) args.push(Object.fromEntries(names.map((n) => [n, 'x'])));
  return (statement.all(...args) as { detail: string }[]).map((row) => row.detail);
}

t.test('every statement on a growing table is served by an index (no full scan as history grows)', async (t) => {
  const { db, statements } = recordingDatabase();
  t.teardown(() => db.close());
  // An API process reads the live list from SQL (docs/ARCHITECTURE.md "Process roles"): both CallRepository modes are run.
  await exercise(db);
  const checked = [...statements].filter((sql) => GROWING.some((table) => new RegExp(`\\b${table}\\b`).test(sql)) && !/^\s*INSERT\b/i.test(sql));
  t.ok(checked.length >= 15, `the repositories prepared ${checked.length} statements on growing tables`);
  for (const sql of checked) {
    // Any SCAN, of a table or of a whole index, under its name or an alias: every step must SEARCH,
    // or read a partial index of live rows only.
    const scans = planOf(db, sql).filter((detail) => detail.startsWith('SCAN ') && !BOUNDED.some((index) => detail.endsWith(`USING INDEX ${index}`)));
    t.same(scans, [], sql.replace(/\s+/g, ' ').slice(0, 120));
  }
  t.end();
});

t.test("a tenant's number list is read off the numbers_tenant index, in order (no scan of every tenant's numbers)", async (t) => {
  const { db, statements } = recordingDatabase();
  t.teardown(() => db.close());
  await exercise(db);
  const list = [...statements].find((sql) => /FROM numbers WHERE tenant_id = @tenant_id/.test(sql));
  if (!list) return t.fail('no tenant list statement');
  t.same(planOf(db, list), ['SEARCH numbers USING INDEX numbers_tenant (tenant_id=?)']);
  t.end();
});

t.test("the operator's list of every tenant's numbers walks the numbers_created index, without sorting each page (migration 009)", async (t) => {
  const { db, statements } = recordingDatabase();
  t.teardown(() => db.close());
  await exercise(db);
  const list = [...statements].find((sql) => /FROM numbers WHERE (?!tenant_id)/.test(sql) && /ORDER BY created_at DESC/.test(sql));
  if (!list) return t.fail('no all-tenant list statement');
  const plan = planOf(db, list).join('\n');
  t.match(plan, /USING INDEX numbers_created/);
  t.notMatch(plan, /TEMP B-TREE/, 'no sort per page');
  t.end();
});

t.test('the start-up read of unfinished calls uses the partial index of live calls (migration 008)', (t) => {
  const { db } = recordingDatabase();
  t.teardown(() => db.close());
  const plan = planOf(db, "SELECT id FROM calls WHERE state != 'ended'");
  t.match(plan.join('\n'), /calls_unfinished/);
  const indexes = db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'calls'").pluck().all();
  t.notOk(indexes.includes('calls_tenant_created'), 'the unused list index is gone');
  t.notOk(indexes.includes('calls_tenant_state'), 'the unused state index is gone');
  t.end();
});

t.test('the live list read from the database (the api role) walks the partial index of live calls in list order, without sorting (migration 021)', async (t) => {
  const { db, statements } = recordingDatabase();
  t.teardown(() => db.close());
  await exercise(db);
  const list = [...statements].find((sql) => /FROM calls WHERE state != 'ended' AND tenant_id/.test(sql));
  if (!list) return t.fail('no live list statement');
  const plan = planOf(db, list).join('\n');
  t.match(plan, /USING INDEX calls_tenant_live/);
  t.notMatch(plan, /TEMP B-TREE/, 'no sort of every live call per page');
  t.end();
});

t.test("docs/EVENTS.md \"Event log\": a call's events are read through the tenant's call index, bounded by the call", async (t) => {
  const { db, statements } = recordingDatabase();
  t.teardown(() => db.close());
  const events = new EventRepository(new SqliteDatabase(db), new FakeClock(Date.parse('2026-03-01T09:00:00.000Z')));
  await events.list(T, { callId: 'call_x' }, { limit: 10 });
  await events.list(T, { type: 'call.*', callId: 'call_x' }, { limit: 10, after: { createdAt: '2026-03-01T09:00:00.000Z', id: 'evt_x' } });
  const byCall = [...statements].filter((sql) => /FROM events WHERE tenant_id/.test(sql));
  t.equal(byCall.length, 1, 'one statement, with a type filter or without');
  for (const sql of byCall) t.match(planOf(db, sql).join('\n'), /USING INDEX events_tenant_call \(tenant_id=\? AND call_id=\?/);
  t.end();
});

t.test('docs/EVENTS.md "Order": the next deliveries of calls are found by the call-order index, not by walking an endpoint\'s deliveries', async (t) => {
  const { db, statements } = recordingDatabase();
  t.teardown(() => db.close());
  const deliveries = new EventDeliveryRepository(new SqliteDatabase(db), new FakeClock(Date.parse('2026-03-01T09:00:00.000Z')));
  await deliveries.nextOfCalls([{ endpointId: 'whe_a', callId: 'call_x' }, { endpointId: 'whe_b', callId: 'call_y' }]);
  const read = [...statements].find((sql) => /FROM event_deliveries d/.test(sql));
  if (!read) return t.fail('no read of the next deliveries');
  const plan = planOf(db, read).join('\n');
  t.match(plan, /SEARCH d USING INDEX event_deliveries_call_order \(endpoint_id=\? AND call_id=\?\)/);
  t.notMatch(plan, /event_deliveries_endpoint/, 'not every delivery ever made to the endpoint (they are kept 30 days)');
  t.end();
});
