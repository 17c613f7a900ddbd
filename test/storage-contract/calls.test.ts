/**
 * Storage contract (docs/ARCHITECTURE.md "Storage"), calls and what hangs off them, on SQLite and
 * PostgreSQL: insert and save (booleans as 0/1, JSON columns), keyset pages of ended calls
 * (docs/API.md "Lists"), restart recovery by node id (docs/ARCHITECTURE.md "Process roles"),
 * the final record written with its transcripts in one transaction (docs/RELIABILITY.md),
 * transcripts, recordings and SIP traces.
 */
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TenantId } from '../../src/common/ids.js';
import { silentLogger } from '../../src/common/logger.js';
import { CdrJournal, DurableCallStore, CallRepository, type CallRecord } from '../../src/storage/index.js';
import { callRecord } from '../support/call-records.js';
import { onEachBackend } from './contract-rig.js';

const at = (s: number): string => new Date(Date.parse('2026-03-01T09:00:00.000Z') + s * 1000).toISOString();
const ended = (call: CallRecord, s: number): CallRecord => ({ ...call, state: 'ended', ended_at: at(s), end_reason: 'completed', hangup_by: 'caller' });

onEachBackend(t, 'calls: insert and save round-trip every column (booleans, JSON, null)', async (t, { store }) => {
  const tenant = (await store.tenants.create('Acme')).id;
  const call = callRecord(tenant, at(0), {
    direction: 'inbound', caller_privacy: true, caller_identity_header: true, caller_verstat: 'TN-Validation-Passed',
    sip_headers: { 'X-Account': '42' }, record: true,
  });
  await store.calls.insert(call);
  t.same(await store.calls.get(tenant, call.id), call);
  t.same(await store.calls.getByControlId(tenant, call.call_control_id), call);
  t.equal(await store.calls.get('ten_other' as TenantId, call.id), undefined, 'tenant isolation');
  const changed: CallRecord = {
    ...ended(call, 30), on_hold: true, sip_status: 200, recording_path: 'ten/x.wav', amd_result: 'human', amd_decided_after_ms: 1200, amd_beep_at_ms: null,
    quality: { mos: 4.2 } as unknown as CallRecord['quality'],
  };
  await store.calls.save(changed);
  t.same(await store.calls.get(tenant, call.id), changed);
});

onEachBackend(t, 'docs/API.md "Lists": ended calls page newest first by (created_at, id), stable under inserts, with filters', async (t, { store }) => {
  const tenant = (await store.tenants.create('Acme')).id;
  const other = (await store.tenants.create('Other')).id;
  const calls: CallRecord[] = [];
  for (let i = 0; i < 5; i++) {
    // Two calls share each creation time: the id breaks the tie.
    for (const direction of ['inbound', 'outbound'] as const) {
      const call = callRecord(tenant, at(i), { direction, carrier: direction === 'inbound' ? 'sandbox' : 'telnyx' });
      await store.calls.insert(call);
      await store.calls.save(ended(call, 100 + i));
      calls.push(call);
    }
  }
  await store.calls.insert(callRecord(other, at(3)));
  const expected = [...calls].sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1)).map((c) => c.id);
  const seen: string[] = [];
  let page = await store.calls.list(tenant, { state: 'ended' }, { limit: 3 });
  seen.push(...page.items.map((c) => c.id));
  await store.calls.insert(callRecord(tenant, at(50))); // newer than the cursor: never shifts a page
  while (page.next) {
    page = await store.calls.list(tenant, { state: 'ended' }, { limit: 3, after: page.next });
    seen.push(...page.items.map((c) => c.id));
  }
  t.same(seen, expected, 'every ended call once, in (created_at DESC, id DESC) order');
  const inbound = await store.calls.list(tenant, { state: 'ended', direction: 'inbound' }, { limit: 10 });
  t.equal(inbound.items.length, 5);
  t.ok(inbound.items.every((c) => c.direction === 'inbound'));
  t.equal((await store.calls.list(tenant, { state: 'ended', carrier: { isNot: 'sandbox' } }, { limit: 10 })).items.length, 5);
  t.equal((await store.calls.list(tenant, { state: 'ended', carrier: { is: 'sandbox' } }, { limit: 10 })).items.length, 5);
  t.equal((await store.calls.list(tenant, { state: 'ended', endedSince: at(103) }, { limit: 10 })).items.length, 4, 'ended at or after the bound');
});

onEachBackend(t, 'docs/ARCHITECTURE.md "Process roles": the live list read from SQL, and recovery takes only its own node\'s calls', async (t, { store }) => {
  const tenant = (await store.tenants.create('Acme')).id;
  const mine = new CallRepository(store.db, { nodeId: 'engine-a' });
  const theirs = new CallRepository(store.db, { nodeId: 'engine-b' });
  const a = callRecord(tenant, at(1), { state: 'ringing' });
  const b = callRecord(tenant, at(2));
  const legacy = callRecord(tenant, at(0));
  await mine.insert(a);
  await theirs.insert(b);
  await store.calls.insert(legacy); // no node: a row from before calls named their node
  t.equal(await store.calls.ownerOf(tenant, a.id), 'engine-a');
  t.equal(await store.calls.ownerOfControlId(tenant, b.call_control_id), 'engine-b');
  t.equal(await store.calls.ownerOf(tenant, legacy.id), null);
  t.equal(await store.calls.ownerOf(tenant, 'call_missing'), undefined);
  t.same((await store.calls.unfinished('engine-a')).map((c) => c.id).sort(), [a.id, legacy.id].sort());
  t.same((await store.calls.unfinished()).length, 3);
  const api = new CallRepository(store.db, { liveList: 'database' });
  t.same((await api.list(tenant, {}, { limit: 10 })).items.map((c) => c.id), [b.id, a.id, legacy.id]);
  t.same((await api.list(tenant, { state: 'ringing' }, { limit: 10 })).items.map((c) => c.id), [a.id]);
  const first = await api.list(tenant, {}, { limit: 2 });
  t.same((await api.list(tenant, {}, { limit: 2, after: first.next! })).items.map((c) => c.id), [legacy.id]);
});

onEachBackend(t, 'docs/RELIABILITY.md: the final record and its transcripts are written together; transcripts by tenant', async (t, { store, clock }) => {
  const dir = mkdtempSync(join(tmpdir(), 'vgw-contract-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const durable = new DurableCallStore({
    calls: store.calls, transcripts: store.transcripts, transaction: (fn) => store.transaction(fn), journal: new CdrJournal(dir), clock, logger: silentLogger(), retryMs: 1000,
  });
  t.teardown(() => durable.stop());
  const tenant = (await store.tenants.create('Acme')).id;
  const call = callRecord(tenant, at(0));
  await durable.insert(call);
  durable.save({ ...call, on_hold: true });
  const turns = [{ role: 'agent' as const, text: 'hello', offset_s: 0.5 }, { role: 'caller' as const, text: "it's me", offset_s: 1 }];
  durable.finish({ call: ended(call, 9), transcripts: [{ source: 'provider', turns }, { source: 'gateway', turns: turns.slice(0, 1) }] });
  await durable.settled();
  t.equal(durable.pendingFinals, 0, 'nothing left for the journal');
  t.match(await store.calls.get(tenant, call.id), { state: 'ended', end_reason: 'completed' });
  t.same(await store.transcripts.sources(tenant, call.id), ['provider', 'gateway']);
  t.same(await store.transcripts.get(tenant, call.id, 'provider'), turns);
  t.equal(await store.transcripts.get('ten_other' as TenantId, call.id, 'provider'), undefined, 'tenant isolation');
  await store.transcripts.save(call.id, 'provider', turns.slice(1));
  t.same(await store.transcripts.get(tenant, call.id, 'provider'), turns.slice(1), 'saved again: replaced (ON CONFLICT DO UPDATE)');
});

onEachBackend(t, 'recordings and SIP traces: upserts, lookups by tenant, expiry by age', async (t, { store, clock }) => {
  const tenant = (await store.tenants.create('Acme')).id;
  const call = callRecord(tenant, at(0));
  await store.calls.insert(call);
  const recording = {
    call_id: call.id, tenant_id: tenant, source: 'provider' as const, path: `${tenant}/${call.id}.mp3`, media_type: 'audio/mpeg',
    bytes: 3_000_000_000, sha256: 'a'.repeat(64), origin: 'download' as const,
  };
  await store.recordings.save(recording);
  t.match(await store.recordings.get(tenant, call.id, 'provider'), { ...recording, bytes: 3_000_000_000 }, 'more than 2^31 bytes, as a number');
  await store.recordings.save({ ...recording, bytes: 10, sha256: 'b'.repeat(64) });
  t.match(await store.recordings.byPath(tenant, call.id, recording.path), { bytes: 10, sha256: 'b'.repeat(64) });
  t.equal(await store.recordings.get('ten_other' as TenantId, call.id, 'provider'), undefined);
  t.equal((await store.calls.get(tenant, call.id))?.recording_path, recording.path, 'the call names its first recording');
  const trace = { legs: [{ leg: 'carrier' as const, sip_call_id: 'abc@host' }], messages: [], dropped_messages: 0 };
  await store.sipTraces.save(tenant, call.id, at(1), trace);
  await store.sipTraces.save(tenant, call.id, at(2), { ...trace, dropped_messages: 3 });
  t.same(await store.sipTraces.get(tenant, call.id), { ...trace, dropped_messages: 3 });
  t.equal(await store.sipTraces.get('ten_other' as TenantId, call.id), undefined);
  t.equal(await store.sipTraces.expire(at(2)), 0, 'created at the bound: kept');
  clock.advance(1);
  t.equal(await store.sipTraces.expire(at(3)), 1);
  t.equal(await store.sipTraces.get(tenant, call.id), undefined);
});
