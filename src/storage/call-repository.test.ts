import t from 'tap';
import fc from 'fast-check';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { FakeClock } from '../common/clock.js';
import { SecretBox } from '../common/secret-box.js';
import { callRecord } from '../../test/support/call-records.js';
import { openStore, type CallRecord, type CallRecordState } from './index.js';

const policy = { idleMs: 30 * 60_000, absoluteMs: 8 * 3600_000 };

t.test('docs/API.md "Calls" (GET /v1/calls): the live list reads only live calls, whatever ended after them', async (t) => {
  const store = await openStore(':memory:', new FakeClock(), policy, new SecretBox(randomBytes(32)));
  t.teardown(() => store.close());
  const tenant = (await store.tenants.create('Acme')).id;
  const at = (s: number): string => new Date(Date.UTC(2026, 10, 22, 8) + s * 1000).toISOString();
  // Three long calls still live, then a busy day of calls that began later and have ended.
  const live = [0, 1, 2].map((s) => callRecord(tenant, at(s), { state: s === 0 ? 'ringing' : 'active' }));
  await store.transaction(async (tx) => {
    for (const c of live) await tx.calls.insert(c);
    for (let s = 10; s < 2010; s++) await tx.calls.insert(callRecord(tenant, at(s), { state: 'ended', ended_at: at(s + 5), end_reason: 'completed' }));
  });

  const page = await store.calls.list(tenant, {}, { limit: 2 });
  t.same(page.items.map((c) => c.id), [live[2]!.id, live[1]!.id], 'newest live calls first');
  const rest = await store.calls.list(tenant, {}, { limit: 2, after: page.next ?? undefined });
  t.same(rest.items.map((c) => c.id), [live[0]!.id], 'the cursor continues among live calls only');
  t.equal(rest.next, null);

  t.end();
});

t.test('docs/API.md "Calls" (GET /v1/calls): live pages from memory equal the rows in the file, through inserts, saves and a reopen', async (t) => {
  const dir = t.testdir({});
  const liveStates = ['initiated', 'ringing', 'active'] as const;
  type Op = { kind: 'insert'; tenant: number; second: number; state: CallRecordState; inbound: boolean } | { kind: 'save'; pick: number; state: CallRecordState };
  const op = fc.oneof(
    fc.record({ kind: fc.constant('insert' as const), tenant: fc.nat(1), second: fc.nat(20), state: fc.constantFrom<CallRecordState>('initiated', 'ringing', 'active', 'ended'), inbound: fc.boolean() }),
    fc.record({ kind: fc.constant('save' as const), pick: fc.nat(), state: fc.constantFrom<CallRecordState>('ringing', 'active', 'ended') }),
  );
  let run = 0;
  await fc.assert(fc.asyncProperty(fc.array(op, { maxLength: 80 }), fc.integer({ min: 1, max: 7 }), async (ops: Op[], limit) => {
    const file = join(dir, `calls-${run++}.db`);
    let store = await openStore(file, new FakeClock(), policy, new SecretBox(randomBytes(32)));
    const tenants = [(await store.tenants.create('A')).id, (await store.tenants.create('B')).id];
    const at = (s: number): string => new Date(Date.UTC(2026, 10, 22, 8) + s * 1000).toISOString();
    const written: CallRecord[] = [];
    for (const o of ops) {
      if (o.kind === 'insert') {
        const c = callRecord(tenants[o.tenant]!, at(o.second), { state: o.state, direction: o.inbound ? 'inbound' : 'outbound', ended_at: o.state === 'ended' ? at(o.second + 1) : null });
        await store.calls.insert(c);
        written.push(c);
      } else if (written.length > 0) {
        const c = { ...written[o.pick % written.length]!, state: o.state };
        await store.calls.save(c);
        written[o.pick % written.length] = c;
      }
    }
    // The model: the rows as the file has them now, in list order.
    const stored = await Promise.all(written.map(async (c) => (await store.calls.get(c.tenant_id, c.id))!));
    const expected = (tenant: string, state: CallRecordState | undefined, direction: 'inbound' | 'outbound' | undefined): string[] => stored
      .filter((c) => c.tenant_id === tenant && c.state !== 'ended' && (state === undefined || c.state === state) && (direction === undefined || c.direction === direction))
      .sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1))
      .map((c) => c.id);
    const walk = async (tenant: (typeof tenants)[number], state: CallRecordState | undefined, direction: 'inbound' | 'outbound' | undefined): Promise<string[]> => {
      const ids: string[] = [];
      let after: { createdAt: string; id: string } | undefined;
      for (let pages = 0; pages < 100; pages++) {
        const page = await store.calls.list(tenant, { state, direction }, { limit, after });
        for (const c of page.items) {
          const row = (await store.calls.get(c.tenant_id, c.id))!;
          if (row.state !== c.state || row.direction !== c.direction || row.created_at !== c.created_at) throw new Error(`stale item ${c.id}`);
          ids.push(c.id);
        }
        if (page.next === null) return ids;
        after = page.next;
      }
      throw new Error('pages never ended');
    };
    const check = async (): Promise<void> => {
      for (const tenant of tenants) {
        for (const state of [undefined, ...liveStates]) {
          for (const direction of [undefined, 'inbound', 'outbound'] as const) {
            const got = await walk(tenant, state, direction);
            const want = expected(tenant, state, direction);
            if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`${state ?? 'live'}/${direction ?? 'any'}: ${JSON.stringify(got)} != ${JSON.stringify(want)}`);
          }
        }
      }
    };
    await check();
    await store.close();
    // Reopened: the index starts from what is live in the file.
    store = await openStore(file, new FakeClock(), policy, new SecretBox(randomBytes(32)));
    await check();
    await store.close();
  }), { numRuns: 60 });
  t.pass('every filter and page size, before and after a reopen');
  t.end();
});
