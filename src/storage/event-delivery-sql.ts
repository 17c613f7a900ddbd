/**
 * @module The SQL of what is due in the outbox (docs/EVENTS.md "Delivery", "Order"), shared by the
 * sender's three ways of finding deliveries (a scan of what is due, the deliveries of events
 * just written, the next deliveries of calls whose delivery ended) and by the claim, which
 * checks the same condition again as it writes, so a delivery read a moment ago is claimed only
 * if still due.
 */
import type { SqlDialect } from './sql/sql-database.js';

// A pending delivery is due when its time has come, no earlier event of its call is still pending
// to the same endpoint (events without a call are not held), its endpoint is enabled, and no
// sender holds a claim on it that is still running.
const DUE = `d.state = 'pending' AND d.next_attempt_at <= @now
     AND (d.claimed_until IS NULL OR d.claimed_until <= @now)
     AND EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.id = d.endpoint_id AND w.disabled = 0)
     AND (d.call_id IS NULL OR NOT EXISTS (
       SELECT 1 FROM event_deliveries p
        WHERE p.endpoint_id = d.endpoint_id AND p.call_id = d.call_id AND p.state = 'pending' AND p.event_seq < d.event_seq))`;

const SELECT_DUE = `
  SELECT d.id, d.tenant_id, d.endpoint_id, w.url, d.call_id, e.id AS event_id, e.type AS event_type, e.payload, d.attempts, d.window_started_at
    FROM event_deliveries d
    JOIN events e ON e.seq = d.event_seq
    JOIN webhook_endpoints w ON w.id = d.endpoint_id
   WHERE ${DUE}`;

/** `column` is one of the JSON array `@param`'s values. */
function inList(dialect: SqlDialect['name'], column: string, param: string): string {
  // PostgreSQL has no json_each: the array is bound as a PostgreSQL array (see `listParam`).
  if (dialect === 'postgres') return `${column} = ANY(CAST(@${param} AS bigint[]))`;
  return `${column} IN (SELECT value FROM json_each(@${param}))`;
}

/** A list bound for {@link inList}: JSON text for SQLite, an array for `pg`. */
export const listParam = (dialect: SqlDialect, values: readonly number[]): unknown => (dialect.name === 'postgres' ? values : JSON.stringify(values));

/** Endpoint and call pairs bound for {@link ofCallsSql}: JSON text for SQLite, two arrays (in step) for `pg`. */
export function pairsParams(dialect: SqlDialect, pairs: readonly { endpointId: string; callId: string }[]): Record<string, unknown> {
  if (dialect.name === 'postgres') return { endpoint_ids: pairs.map((p) => p.endpointId), call_ids: pairs.map((p) => p.callId) };
  return { pairs: JSON.stringify(pairs.map((p) => [p.endpointId, p.callId])) };
}

/**
 * What is due, oldest first, at most `@per_endpoint` of each endpoint and then `@per_tenant` of
 * each tenant (so a tenant with thousands due to a dead endpoint fills neither the page nor its
 * own share of it), with each endpoint's count of due deliveries (`endpoint_due`): more than the
 * page holds of it means some were left unread.
 */
export const scanSql = `
  SELECT d.id, d.tenant_id, d.endpoint_id, w.url, d.call_id, e.id AS event_id, e.type AS event_type, e.payload, d.attempts,
         d.window_started_at, d.endpoint_due
    FROM (
      SELECT x.*, ROW_NUMBER() OVER (PARTITION BY x.tenant_id ORDER BY x.next_attempt_at, x.id) AS tenant_rank
        FROM (
          SELECT d.id, d.tenant_id, d.endpoint_id, d.call_id, d.event_seq, d.attempts, d.window_started_at, d.next_attempt_at,
                 ROW_NUMBER() OVER (PARTITION BY d.endpoint_id ORDER BY d.next_attempt_at, d.id) AS endpoint_rank,
                 COUNT(*) OVER (PARTITION BY d.endpoint_id) AS endpoint_due
            FROM event_deliveries d
           WHERE ${DUE}) x
       WHERE x.endpoint_rank <= @per_endpoint) d
    JOIN events e ON e.seq = d.event_seq
    JOIN webhook_endpoints w ON w.id = d.endpoint_id
   WHERE d.tenant_rank <= @per_tenant
   ORDER BY d.next_attempt_at, d.id
   LIMIT @limit`;

/** The SQL of each dialect, built once (the claim runs for every delivery). */
const byDialect = (build: (dialect: SqlDialect['name']) => string): ((dialect: SqlDialect) => string) => {
  const built = { sqlite: build('sqlite'), postgres: build('postgres') };
  return (dialect) => built[dialect.name];
};

/** The due deliveries of the events named (just written). */
export const ofEventsSql = byDialect((dialect) => `${SELECT_DUE}
     AND ${inList(dialect, 'd.event_seq', 'seqs')}
   ORDER BY d.id`);

/**
 * The due deliveries of calls to endpoints, named in pairs ({@link pairsParams}): at most one per
 * pair (the due condition holds a call's later deliveries behind its earliest pending one). Each
 * dialect in the form its planner serves from the call-order index (endpoint, call), so that only
 * the pairs' pending deliveries are read: in SQLite a row value; in PostgreSQL, which read every
 * due delivery and filtered the pairs out of them, one lateral read per pair.
 */
export const ofCallsSql = byDialect((dialect) => (dialect === 'postgres'
  ? `SELECT n.* FROM unnest(CAST(@endpoint_ids AS text[]), CAST(@call_ids AS text[])) AS k(endpoint_id, call_id)
      CROSS JOIN LATERAL (${SELECT_DUE}
         AND d.endpoint_id = k.endpoint_id AND d.call_id = k.call_id
       ORDER BY d.event_seq
       LIMIT 1) AS n
     ORDER BY n.id`
  : `${SELECT_DUE}
     AND (d.endpoint_id, d.call_id) IN (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(@pairs))
   ORDER BY d.id`));

/** Those of the deliveries named that are still due, read without a claim (one sender owns the outbox). */
export const stillDueSql = byDialect((dialect) => `
  SELECT d.id FROM event_deliveries AS d
   WHERE ${inList(dialect, 'd.id', 'ids')} AND ${DUE}`);

/** Claims those of the deliveries named that are still due; returns the ids claimed. */
export const claimSql = byDialect((dialect) => `
  UPDATE event_deliveries AS d SET claimed_by = @by, claimed_until = @until
   WHERE ${inList(dialect, 'd.id', 'ids')} AND ${DUE}
  RETURNING id`);
