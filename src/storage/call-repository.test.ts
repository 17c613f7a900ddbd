import t from 'tap';
import { randomBytes } from 'node:crypto';
import { FakeClock } from '../common/clock.js';
import { SecretBox } from '../common/secret-box.js';
import { callRecord } from '../../test/support/call-records.js';
import { LIVE_LIST_SQL } from './call-repository.js';
import { openStore } from './index.js';

const policy = { idleMs: 30 * 60_000, absoluteMs: 8 * 3600_000 };

t.test('contract 4 (GET /v1/calls): the live list reads only live calls, whatever ended after them', (t) => {
  const store = openStore(':memory:', new FakeClock(), policy, new SecretBox(randomBytes(32)));
  t.teardown(() => store.close());
  const tenant = store.tenants.create('Acme').id;
  const at = (s: number): string => new Date(Date.UTC(2026, 10, 22, 8) + s * 1000).toISOString();
  // Three long calls still live, then a busy day of calls that began later and have ended.
  const live = [0, 1, 2].map((s) => callRecord(tenant, at(s), { state: s === 0 ? 'ringing' : 'active' }));
  store.transaction(() => {
    for (const c of live) store.calls.insert(c);
    for (let s = 10; s < 2010; s++) store.calls.insert(callRecord(tenant, at(s), { state: 'ended', ended_at: at(s + 5), end_reason: 'completed' }));
  });

  const page = store.calls.list(tenant, {}, { limit: 2 });
  t.same(page.items.map((c) => c.id), [live[2]!.id, live[1]!.id], 'newest live calls first');
  const rest = store.calls.list(tenant, {}, { limit: 2, after: page.next ?? undefined });
  t.same(rest.items.map((c) => c.id), [live[0]!.id], 'the cursor continues among live calls only');
  t.equal(rest.next, null);

  // The plan, not a timing: the page comes off the partial index in order, with no sort and
  // without visiting the 2,000 ended rows (which a walk of calls_tenant_created would).
  const plan = store.db.prepare(`EXPLAIN QUERY PLAN ${LIVE_LIST_SQL}`)
    .all({ tenant_id: tenant, direction: null, after_created_at: null, after_id: null, limit: 51 }) as { detail: string }[];
  const details = plan.map((p) => p.detail).join(' | ');
  t.match(details, /USING INDEX calls_tenant_live/, details);
  t.notMatch(details, /TEMP B-TREE/, 'no sort step');
  t.end();
});
