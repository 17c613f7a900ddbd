/**
 * PostgreSQL's side of src/storage/query-plans.test.ts (docs/ARCHITECTURE.md "Storage"): no
 * statement the repositories send reads a table that grows with traffic by a full scan, so the
 * shared store does not slow down as its history grows. Every statement the repositories send
 * while they run (plan-exercise.ts) is prepared on a migrated database and its generic plan (the
 * one a pooled, prepared statement ends up with, whatever its parameters) is read with sequential
 * scans disabled: a Seq Scan left on a growing table means no index can serve the statement, and
 * an index read whole (no condition on its first column) is the same scan in index order.
 *
 * PostgreSQL 15 has no EXPLAIN (GENERIC_PLAN): the statement is prepared with its parameters'
 * types inferred, as the `pg` driver sends them, and explained as EXECUTE with NULLs under
 * plan_cache_mode = force_generic_plan, which plans without looking at the values.
 */
import t, { type Test } from 'tap';
import pg from 'pg';
import { FakeClock } from '../../src/common/clock.js';
import { openSqlDatabase } from '../../src/storage/index.js';
import { translatePlaceholders } from '../../src/storage/sql/placeholders.js';
import { testDatabase } from '../support/postgres.js';
import { exercise, recordingDatabase } from './plan-exercise.js';

/** Tables that grow with every call, request or event. */
const GROWING = [
  'calls', 'transcripts', 'webhook_deliveries', 'recordings', 'idempotency_keys', 'sessions', 'sip_traces',
  'events', 'event_deliveries', 'event_delivery_attempts',
];

/** Partial indexes of rows that do not pile up with history, which a statement may read whole. */
const BOUNDED: Record<string, string> = {
  calls_unfinished: 'live calls only: start-up recovery reads them all',
  calls_tenant_live: "one tenant's live calls only: the api role's live list",
  // A delivery leaves both once delivered, or failed for good at the end of its 24-hour retry window.
  event_deliveries_due: "pending deliveries only: a restarted sender's release of its claims reads them all",
  event_deliveries_call_order: 'pending deliveries only',
};

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}

interface IndexInfo {
  table: string;
  /** Key columns in order (null for an expression). */
  columns: (string | null)[];
  partial: boolean;
  /** The primary key or unique constraint the index enforces, if any. */
  constraint: string | null;
}

async function indexes(client: pg.Client): Promise<Map<string, IndexInfo>> {
  const { rows } = await client.query<IndexInfo & { index: string }>(`
    SELECT i.relname AS index, c.relname AS table, x.indpred IS NOT NULL AS partial, k.conname AS constraint,
           ARRAY(SELECT a.attname::text FROM unnest(x.indkey::int2[]) WITH ORDINALITY n(attnum, i)
                   LEFT JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = n.attnum ORDER BY n.i) AS columns
      FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class c ON c.oid = x.indrelid
      LEFT JOIN pg_constraint k ON k.conindid = x.indexrelid AND k.contype IN ('p', 'u')
     WHERE c.relnamespace = 'public'::regnamespace`);
  return new Map(rows.map(({ index, ...info }) => [index, info]));
}

/** Whether an index condition bounds `column` (PostgreSQL prints the index column on the left). */
const bounds = (cond: string, column: string): boolean => new RegExp(`\\((\\w+\\.)?"?${column}"? (?:(?:=|<|<=|>|>=) |IS NULL\\))`).test(cond);

/** A full read of a growing table: a sequential scan, or an index read whole (`index`). */
interface FullRead {
  table: string;
  index?: string;
  what: string;
}

/** Every full read of a growing table in `plan`. */
function fullReads(plan: PlanNode, known: Map<string, IndexInfo>): FullRead[] {
  const found: FullRead[] = [];
  const table = plan['Relation Name'];
  const name = plan['Index Name'];
  const index = name === undefined ? undefined : known.get(name);
  if (plan['Node Type'] === 'Seq Scan' && table !== undefined && GROWING.includes(table)) found.push({ table, what: `Seq Scan on ${table}` });
  if (name !== undefined && index && GROWING.includes(index.table) && !(name in BOUNDED)) {
    const first = index.columns[0];
    const cond = plan['Index Cond'];
    if (!first || !bounds(cond ?? '', first)) found.push({ table: index.table, index: name, what: `${name} on ${index.table} read whole (${cond ?? 'no condition'})` });
  }
  for (const child of plan.Plans ?? []) found.push(...fullReads(child, known));
  return found;
}

/** The generic plan of `text` (with `$n` parameters), seen with sequential scans disabled. */
async function genericPlan(client: pg.Client, text: string): Promise<PlanNode> {
  await client.query(`PREPARE plan_probe AS ${text}`);
  try {
    const { rows: [prepared] } = await client.query<{ n: number }>("SELECT coalesce(array_length(parameter_types, 1), 0) AS n FROM pg_prepared_statements WHERE name = 'plan_probe'");
    const args = prepared!.n === 0 ? '' : `(${Array.from({ length: prepared!.n }, () => 'NULL').join(', ')})`;
    const { rows: [explained] } = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`EXPLAIN (FORMAT JSON) EXECUTE plan_probe${args}`);
    return explained!['QUERY PLAN'][0]!.Plan;
  } finally {
    await client.query('DEALLOCATE plan_probe');
  }
}

/**
 * The full reads of growing tables no index can spare `text`: none when every step can be served
 * by an index. Which index a plan picks depends on statistics (this database holds a handful of
 * rows), so an index the planner reads whole is set aside (dropped in a transaction rolled back
 * after) and the statement planned again, until its plan needs no full read or keeps a sequential
 * scan, which with sequential scans disabled means no index is left that could serve it.
 */
async function unservedReads(client: pg.Client, known: Map<string, IndexInfo>, text: string): Promise<string[]> {
  const setAside: string[] = [];
  await client.query('BEGIN');
  try {
    for (;;) {
      const reads = fullReads(await genericPlan(client, text), known);
      if (reads.length === 0) return [];
      if (reads.some((read) => read.index === undefined)) return reads.map((read) => read.what + (setAside.length > 0 ? `, with ${setAside.join(', ')} set aside` : ''));
      for (const index of new Set(reads.map((read) => read.index!))) {
        const { table, constraint } = known.get(index)!;
        await client.query(constraint === null ? `DROP INDEX ${index}` : `ALTER TABLE ${table} DROP CONSTRAINT ${constraint} CASCADE`);
        setAside.push(index);
      }
    }
  } finally {
    await client.query('ROLLBACK');
  }
}

/** The statement on one line, a long SELECT list cut short, so that statements on one table tell apart. */
const brief = (sql: string): string => sql.replace(/\s+/g, ' ').trim().replace(/^SELECT (DISTINCT )?([\w., ]{40})[\w., ]* FROM /, 'SELECT $1$2… FROM ').slice(0, 160);
const touchesGrowing = (sql: string): boolean => GROWING.some((table) => new RegExp(`\\b${table}\\b`).test(sql));

interface PlanRig {
  statements: string[];
  client: pg.Client;
  known: Map<string, IndexInfo>;
}

/**
 * A fresh database the repositories have run on, the statements they sent, and a connection that
 * plans with sequential scans disabled; undefined when the PostgreSQL server is not given (a skip,
 * or a failure under VGW_REQUIRE_INTEROP=1).
 */
async function planRig(t: Test): Promise<PlanRig | undefined> {
  const url = await testDatabase(t);
  if (url === undefined) return undefined;
  const { db, statements } = recordingDatabase(await openSqlDatabase(url));
  t.teardown(() => db.close());
  await exercise(db, new FakeClock(Date.parse('2026-03-01T09:00:00.000Z')));
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  t.teardown(() => client.end());
  await client.query('SET enable_seqscan = off');
  await client.query('SET plan_cache_mode = force_generic_plan');
  return { statements: [...statements], client, known: await indexes(client) };
}

t.test('every statement on a growing table is served by an index on PostgreSQL (no full scan as history grows)', async (t) => {
  const rig = await planRig(t);
  if (!rig) return;
  const checked = rig.statements.filter(touchesGrowing);
  t.ok(checked.length >= 60, `the repositories sent ${checked.length} statements on growing tables`);
  for (const table of GROWING) t.ok(checked.some((sql) => new RegExp(`\\b${table}\\b`).test(sql)), `some statement reads or writes ${table}`);
  for (const sql of checked) {
    t.same(await unservedReads(rig.client, rig.known, translatePlaceholders(sql).text), [], brief(sql));
  }
});

/** The partial indexes of event deliveries that hold pending rows only (migration 020). */
const PENDING_ONLY = ['event_deliveries_due', 'event_deliveries_call_order'];

t.test("the senders' reads and claims of due deliveries walk the partial indexes of pending deliveries", async (t) => {
  const rig = await planRig(t);
  if (!rig) return;
  const planOf = async (sql: string): Promise<string> => JSON.stringify(await genericPlan(rig.client, translatePlaceholders(sql).text));
  const scan = rig.statements.find((sql) => /FROM event_deliveries d/.test(sql) && /ORDER BY d\.next_attempt_at/.test(sql));
  if (!scan) return t.fail('no scan of due deliveries');
  // Partitioned by endpoint for its caps, the scan may walk either partial index: both hold pending rows only.
  const walked = [...(await planOf(scan)).matchAll(/"Index Name":"(event_deliveries_\w+)"/g)].map((m) => m[1]);
  t.ok(walked.length > 0 && walked.every((name) => PENDING_ONLY.includes(name!)), `due deliveries found through pending rows alone (${walked.join(', ')})`);
  // Every statement that holds a call's delivery behind an earlier one pending to the same endpoint.
  const ordered = rig.statements.filter((sql) => /p\.event_seq < d\.event_seq/.test(sql));
  t.ok(ordered.length >= 1, `${ordered.length} statements keep a call's deliveries in order`);
  for (const sql of ordered) t.match(await planOf(sql), /"Index Name":"event_deliveries_call_order"/, `the earlier delivery found by its order: ${brief(sql)}`);
  // The next deliveries of calls whose delivery ended: by call and endpoint, not every delivery ever made to the endpoint.
  const ofCalls = rig.statements.find((sql) => /CROSS JOIN LATERAL/.test(sql));
  if (!ofCalls) return t.fail('no read of the next deliveries of calls');
  t.match(await planOf(ofCalls), /"Index Name":"event_deliveries_call_order","Relation Name":"event_deliveries","Alias":"d"[^}]*"Index Cond":"\(\(endpoint_id = [^"]*k\.endpoint_id[^"]*call_id = k\.call_id/, 'the next deliveries of calls found by call and endpoint');
});

t.test("a call's events are read through the tenant's call index, not by walking all of the tenant's events", async (t) => {
  const rig = await planRig(t);
  if (!rig) return;
  const byCall = rig.statements.filter((sql) => /FROM events WHERE tenant_id/.test(sql) && /call_id = @call_id/.test(sql) && /ORDER BY created_at DESC/.test(sql));
  t.ok(byCall.length >= 1, `${byCall.length} reads of the event log filtered by call`);
  for (const sql of byCall) {
    // The call bounds the index read (an Index Cond on call_id), not just filters what it returns.
    const plan = JSON.stringify(await genericPlan(rig.client, translatePlaceholders(sql).text));
    t.match(plan, /"Index Name":"events_tenant_call"[^}]*"Index Cond":"[^"]*\(?call_id = /, brief(sql));
  }
});

t.test('a deleted row never makes PostgreSQL scan a growing table for the rows that refer to it', async (t) => {
  const rig = await planRig(t);
  if (!rig) return;
  const { rows: keys } = await rig.client.query<{ name: string; table: string; referenced: string; cascades: boolean; columns: string[] }>(`
    SELECT c.conname AS name, t.relname AS table, r.relname AS referenced, c.confdeltype = 'c' AS cascades,
           ARRAY(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY k(attnum, n)
                   JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum ORDER BY k.n) AS columns
      FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_class r ON r.oid = c.confrelid
     WHERE c.contype = 'f'`);
  // The tables the repositories delete from, and those their deletes cascade to.
  const deleted = new Set(rig.statements.flatMap((sql) => /^\s*DELETE FROM (\w+)/i.exec(sql)?.[1] ?? []));
  t.ok(deleted.has('events') && deleted.has('webhook_endpoints'), `the repositories delete from ${[...deleted].join(', ')}`);
  for (let size = -1; size !== deleted.size;) {
    size = deleted.size;
    for (const key of keys) if (key.cascades && deleted.has(key.referenced)) deleted.add(key.table);
  }
  // PostgreSQL checks (or cascades to) the referring rows of each deleted row with `WHERE <columns> = $1`: a full index, led by them, serves it.
  const checked = keys.filter((key) => deleted.has(key.referenced) && GROWING.includes(key.table));
  t.ok(checked.length >= 2, `${checked.length} foreign keys of growing tables refer to rows that get deleted`);
  for (const key of checked) {
    const served = [...rig.known].some(([, index]) => index.table === key.table && !index.partial
      && key.columns.every((column) => index.columns.slice(0, key.columns.length).includes(column)));
    t.ok(served, `${key.table}(${key.columns.join(', ')}) → ${key.referenced}: an index leads with the referring columns (${key.name})`);
  }
});
