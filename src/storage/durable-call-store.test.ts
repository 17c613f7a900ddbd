/**
 * docs/RELIABILITY.md, storage failures and the CDR journal: the engine's call store never throws
 * a refused final record at the call; it keeps it in the journal (fsynced) and writes it once the
 * database takes writes again, at the next retry or the next start. A real second SQLite
 * connection holds the lock; a full disk is SQLite's own SQLITE_FULL (max_page_count) and an
 * injected ENOSPC from the journal's file operations.
 */
import t from 'tap';
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import { FakeClock } from '../common/clock.js';
import { silentLogger } from '../common/logger.js';
import { SecretBox } from '../common/secret-box.js';
import { isStorageFailure } from '../common/storage-failure.js';
import { callRecord } from '../../test/support/call-records.js';
import { CDR_JOURNAL_FILE, CdrJournal, type JournalFs } from './cdr-journal.js';
import { DurableCallStore } from './durable-call-store.js';
import { databasePath, openStore, type Store } from './index.js';
import { sqliteOf } from '../../test/support/sqlite-of.js';

const policy = { idleMs: 60_000, absoluteMs: 3_600_000 };
const secrets = new SecretBox(randomBytes(32));

async function rig(dir: string, fs?: JournalFs): Promise<{ store: Store; calls: DurableCallStore; clock: FakeClock; journal: CdrJournal }> {
  const clock = new FakeClock(Date.parse('2026-01-01T12:00:00.000Z'));
  const store = await openStore(databasePath(dir), clock, policy, secrets, { busyTimeoutMs: 20 });
  const journal = new CdrJournal(dir, fs);
  const calls = new DurableCallStore({
    calls: store.calls, transcripts: store.transcripts, transaction: (fn) => store.transaction(fn), journal, clock, logger: silentLogger(), retryMs: 1000,
  });
  return { store, calls, clock, journal };
}

const ended = (call: ReturnType<typeof callRecord>) => ({ ...call, state: 'ended' as const, ended_at: '2026-01-01T12:00:05.000Z', end_reason: 'completed', hangup_by: 'agent' as const, recording_path: 'recordings/x.wav' });
const turns = [{ role: 'agent' as const, text: 'goodbye', offset_s: 1.5 }];

t.test('a final record refused by a locked database goes to the CDR journal and is written, with its transcript, once the lock is gone', async (t) => {
  const dir = t.testdir({});
  const { store, calls, clock, journal } = await rig(dir);
  t.teardown(() => store.close());
  const tenant = (await store.tenants.create('acme')).id;
  const call = callRecord(tenant, '2026-01-01T11:59:00.000Z');
  await calls.insert(call);

  const other = new Database(databasePath(dir));
  t.teardown(() => other.close());
  other.exec('BEGIN EXCLUSIVE');
  t.doesNotThrow(() => calls.finish({ call: ended(call), transcripts: [{ source: 'provider', turns }] }), 'ending never throws the refusal');
  await calls.settled();
  t.doesNotThrow(() => calls.save({ ...call, on_hold: true }), 'a change of an ended call is ignored, not thrown');
  await journal.settled();
  const lines = readFileSync(join(dir, CDR_JOURNAL_FILE), 'utf8').trim().split('\n');
  t.equal(lines.length, 1, 'one journal line');
  t.match(JSON.parse(lines[0]!), { call: { id: call.id, state: 'ended', recording_path: 'recordings/x.wav' }, transcripts: [{ source: 'provider', turns }] });
  t.equal((await store.calls.get(tenant, call.id))?.state, 'active', 'the database still has the live record');
  t.same(await calls.unfinished(), [], 'recovery does not take a call whose final record waits for a call a crash cut off');
  let refusal: unknown;
  try {
    await calls.insert(callRecord(tenant, '2026-01-01T12:00:01.000Z'));
  } catch (err) {
    refusal = err;
  }
  t.ok(isStorageFailure(refusal), 'a new call is refused with a storage failure (the API answers 503)');

  clock.advance(1000);
  await calls.settled();
  t.equal(calls.pendingFinals, 1, 'still waiting while the lock is held');
  other.exec('COMMIT');
  clock.advance(1000);
  await calls.settled();
  t.equal(calls.pendingFinals, 0, 'the retry wrote it');
  t.match(await store.calls.get(tenant, call.id), { state: 'ended', hangup_by: 'agent', recording_path: 'recordings/x.wav' });
  t.same(await store.transcripts.get(tenant, call.id, 'provider'), turns, 'with its transcript, in the same write');
  await journal.settled();
  t.notOk(existsSync(join(dir, CDR_JOURNAL_FILE)), 'the journal is emptied');
  t.notOk(calls.isFailing);
});

t.test('a CDR journal left by a stopped gateway is replayed at the next start', async (t) => {
  const dir = t.testdir({});
  let { store, calls } = await rig(dir);
  const tenant = (await store.tenants.create('acme')).id;
  const call = callRecord(tenant, '2026-01-01T11:59:00.000Z');
  await calls.insert(call);
  const other = new Database(databasePath(dir));
  other.exec('BEGIN EXCLUSIVE');
  calls.finish({ call: ended(call), transcripts: [] });
  await calls.settled();
  await calls.stop();
  await store.close();
  other.exec('COMMIT');
  other.close();
  t.ok(existsSync(join(dir, CDR_JOURNAL_FILE)), 'the stop left the record in the journal');

  ({ store, calls } = await rig(dir));
  t.teardown(() => store.close());
  t.equal((await store.calls.unfinished()).length, 1, 'the database alone would have it unfinished');
  t.equal(await calls.replayJournal(), 1);
  t.match(await store.calls.get(tenant, call.id), { state: 'ended', end_reason: 'completed' });
  t.same(await calls.unfinished(), []);
  await calls.stop();
  t.notOk(existsSync(join(dir, CDR_JOURNAL_FILE)));
});

t.test('disk full: SQLITE_FULL from the database and ENOSPC from the journal neither throw nor lose the record while the process lives', async (t) => {
  const dir = t.testdir({});
  let diskFull = true;
  const enospc = (): never => { throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' }); };
  const fs: JournalFs = {
    open: async (...args: Parameters<typeof fsp.open>) => (diskFull ? enospc() : fsp.open(...args)),
    rename: fsp.rename,
    rm: fsp.rm,
  };
  const { store, calls, clock, journal } = await rig(dir, fs);
  t.teardown(() => store.close());
  const tenant = (await store.tenants.create('acme')).id;
  const call = callRecord(tenant, '2026-01-01T11:59:00.000Z');
  await calls.insert(call);
  // The database may not grow by a page: a large transcript cannot be stored.
  const pages = sqliteOf(store).pragma('page_count', { simple: true }) as number;
  sqliteOf(store).pragma(`max_page_count = ${pages}`);
  const long = Array.from({ length: 2000 }, (_, i) => ({ role: 'caller' as const, text: `turn ${i} `.repeat(10), offset_s: i }));
  t.doesNotThrow(() => calls.finish({ call: ended(call), transcripts: [{ source: 'gateway', turns: long }] }));
  await calls.settled();
  await journal.settled();
  t.notOk(existsSync(join(dir, CDR_JOURNAL_FILE)), 'the journal could not be written either');
  t.equal(calls.pendingFinals, 1, 'the record is kept in memory and retried');
  clock.advance(1000);
  await calls.settled();
  t.equal(calls.pendingFinals, 1, 'still refused while the disk is full');

  diskFull = false;
  sqliteOf(store).pragma('max_page_count = 1073741823');
  clock.advance(1000);
  await calls.settled();
  t.equal(calls.pendingFinals, 0);
  t.equal((await store.transcripts.get(tenant, call.id, 'gateway'))?.length, 2000, 'written whole once there is room');
});

t.test('a final record the database rejects as invalid (a bug, not an outage) is kept in the journal and holds back nothing', async (t) => {
  const dir = t.testdir({});
  const { store, calls, journal } = await rig(dir);
  t.teardown(() => store.close());
  const tenant = (await store.tenants.create('acme')).id;
  // A transcript of a call the database never had: the foreign key refuses it.
  const unknown = callRecord(tenant, '2026-01-01T11:59:00.000Z');
  t.doesNotThrow(() => calls.finish({ call: ended(unknown), transcripts: [{ source: 'gateway', turns }] }));
  await calls.settled();
  const call = callRecord(tenant, '2026-01-01T11:59:30.000Z');
  await calls.insert(call);
  calls.finish({ call: ended(call), transcripts: [] });
  await calls.settled();
  t.equal((await store.calls.get(tenant, call.id))?.state, 'ended', 'the next record is written at once: no breaker for a bug');
  t.notOk(calls.isFailing);
  await journal.settled();
  t.match(readFileSync(join(dir, CDR_JOURNAL_FILE), 'utf8'), unknown.id, 'the rejected record is kept for the operator');
});

t.test('what counts as a storage failure: SQLite busy, full and I/O errors and the same from the file system; not bugs', (t) => {
  for (const code of ['SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_FULL', 'SQLITE_IOERR_WRITE', 'SQLITE_LOCKED', 'SQLITE_READONLY', 'ENOSPC', 'EIO', 'EROFS']) {
    t.ok(isStorageFailure(Object.assign(new Error(code), { code })), code);
  }
  for (const err of [new Error('bug'), Object.assign(new Error('x'), { code: 'SQLITE_CONSTRAINT_PRIMARYKEY' }), Object.assign(new Error('x'), { code: 'ENOENT' }), null, 'SQLITE_BUSY']) {
    t.notOk(isStorageFailure(err), String((err as { code?: string } | null)?.code ?? err));
  }
  t.end();
});

t.test('docs/EVENTS.md "Event types": a key pressed is logged after the change queued before it; under a lock it is dropped and the change kept', async (t) => {
  const dir = t.testdir({});
  const { store, calls } = await rig(dir);
  t.teardown(() => store.close());
  const tenant = (await store.tenants.create('acme')).id;
  const call = callRecord(tenant, '2026-01-01T11:59:00.000Z');
  await calls.insert(call);
  calls.save({ ...call, on_hold: true });
  calls.note({ ...call, on_hold: true }, { type: 'call.dtmf', digit: '7' });
  await calls.settled();
  const types = async () => (await store.events.list(tenant, { callId: call.id }, { limit: 10 })).items.sort((a, b) => a.seq - b.seq).map((e) => e.type);
  t.same(await types(), ['call.initiated', 'call.answered', 'call.hold', 'call.dtmf'], 'in the order they were told');
  const [dtmf] = (await store.events.list(tenant, { type: 'call.dtmf' }, { limit: 1 })).items;
  t.match(JSON.parse(dtmf!.payload), { data: { digit: '7', call: { id: call.id, on_hold: true } } });

  const other = new Database(databasePath(dir));
  t.teardown(() => other.close());
  other.exec('BEGIN EXCLUSIVE');
  t.doesNotThrow(() => calls.note(call, { type: 'call.agent.connected' }), 'a refused event never throws at the call');
  calls.save({ ...call, on_hold: false });
  await calls.settled();
  other.exec('ROLLBACK');
  await calls.retry();
  t.same(await types(), ['call.initiated', 'call.answered', 'call.hold', 'call.dtmf', 'call.unhold'], 'the change was kept and written; the event of a moment was not');
});
