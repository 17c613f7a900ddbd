/**
 * @module The event log, which is also the outbox (docs/EVENTS.md "Event log"): an event is
 * appended with one pending delivery per enabled endpoint of its tenant that subscribes to its
 * type, in the caller's transaction (docs/DECISIONS.md "Call events: the outbox"). The log is
 * read newest first by the API, oldest first after a sequence number by the live stream, and
 * trimmed after `events.retention_days`.
 */
import type { Clock } from '../common/clock.js';
import { newEventId, type TenantId } from '../common/ids.js';
import { isoNow } from '../common/time.js';
import { EVENTS_API_VERSION, subscribes, type EventEnvelope, type EventType } from '../events/event-types.js';
import type { SqlExecutor } from './sql/sql-database.js';
import { KEYSET_SQL, keysetParams, toPage, type Page, type PageRequest } from './page.js';

export interface EventRecord {
  /** The log's order: the stream resumes after it, a call's deliveries follow it. */
  seq: number;
  id: string;
  tenant_id: TenantId;
  call_id: string | null;
  type: EventType;
  created_at: string;
  /** The envelope exactly as delivered and streamed. */
  payload: string;
}

/** An event as appended, with how many deliveries were written with it. */
export interface AppendedEvent extends EventRecord {
  deliveries: number;
}

/** What an event is made of before it has an id and a time. */
export interface NewEvent {
  type: EventType;
  callId: string | null;
  data: Record<string, unknown>;
}

export interface EventFilter {
  /** One type, or a prefix ending in `*` (`call.transfer.*`). */
  type?: string | undefined;
  callId?: string | undefined;
}

type Row = Omit<EventRecord, 'seq'> & { seq: number | string };
const COLUMNS = 'seq, id, tenant_id, call_id, type, created_at, payload';
const toRecord = (row: Row): EventRecord => ({ ...row, seq: Number(row.seq) });

/** `type` as SQL: an exact type, or a prefix (`call.*` reads as `call.%`, LIKE's wildcards escaped). */
function typeParams(type: string | undefined): { type_exact: string | null; type_prefix: string | null } {
  if (type === undefined) return { type_exact: null, type_prefix: null };
  if (!type.endsWith('*')) return { type_exact: type, type_prefix: null };
  return { type_exact: null, type_prefix: `${type.slice(0, -1).replace(/[\\%_]/g, (c) => `\\${c}`)}%` };
}
// Each CAST gives PostgreSQL the type of a parameter it first meets in `IS NULL`, where it cannot
// infer one (as in KEYSET_SQL): without them it refuses to prepare the statement at all.
const TYPE_SQL = `(CAST(@type_exact AS TEXT) IS NULL OR type = @type_exact)
  AND (CAST(@type_prefix AS TEXT) IS NULL OR type LIKE @type_prefix ESCAPE '\\')`;
/**
 * The filter as SQL. A call's filter is written out rather than as "NULL or equal", so that a
 * call's events are read from `events_tenant_call` instead of walking all of its tenant's.
 */
const filterSql = (filter: EventFilter): string => (filter.callId === undefined ? TYPE_SQL : `${TYPE_SQL} AND call_id = @call_id`);
const callParam = (filter: EventFilter): { call_id?: string } => (filter.callId === undefined ? {} : { call_id: filter.callId });

export class EventRepository {
  readonly #db: SqlExecutor;
  readonly #clock: Clock;

  constructor(db: SqlExecutor, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  /**
   * Appends the events in order, each with a pending delivery, due now, to every enabled endpoint
   * of the tenant that subscribes to its type. Run it in the transaction of the change that
   * caused the events. Returns them as stored, for the live stream and the sender once that
   * transaction commits.
   */
  async append(tenantId: TenantId, events: readonly NewEvent[]): Promise<AppendedEvent[]> {
    if (events.length === 0) return [];
    const endpoints = await this.#db.all<{ id: string; events: string }>('SELECT id, events FROM webhook_endpoints WHERE tenant_id = ? AND disabled = 0', [tenantId]);
    const subscribed = endpoints.map((e) => ({ id: e.id, events: JSON.parse(e.events) as string[] }));
    const stored: AppendedEvent[] = [];
    for (const event of events) {
      const id = newEventId();
      const createdAt = isoNow(this.#clock);
      const envelope: EventEnvelope = { id, type: event.type, created_at: createdAt, api_version: EVENTS_API_VERSION, data: event.data };
      const payload = JSON.stringify(envelope);
      const inserted = await this.#db.get<{ seq: number | string }>(
        'INSERT INTO events (id, tenant_id, call_id, type, created_at, payload) VALUES (?, ?, ?, ?, ?, ?) RETURNING seq',
        [id, tenantId, event.callId, event.type, createdAt, payload],
      );
      const seq = Number(inserted!.seq);
      const to = subscribed.filter((e) => subscribes(e.events, event.type));
      for (const endpoint of to) {
        await this.#db.run(
          `INSERT INTO event_deliveries (event_seq, endpoint_id, tenant_id, call_id, state, attempts, next_attempt_at, window_started_at, updated_at)
           VALUES (?, ?, ?, ?, 'pending', 0, ?, ?, ?)`,
          [seq, endpoint.id, tenantId, event.callId, createdAt, createdAt, createdAt],
        );
      }
      stored.push({ seq, id, tenant_id: tenantId, call_id: event.callId, type: event.type, created_at: createdAt, payload, deliveries: to.length });
    }
    return stored;
  }

  async get(tenantId: TenantId, id: string): Promise<EventRecord | undefined> {
    const row = await this.#db.get<Row>(`SELECT ${COLUMNS} FROM events WHERE tenant_id = ? AND id = ?`, [tenantId, id]);
    return row && toRecord(row);
  }

  /** A page of the tenant's log, newest first. */
  async list(tenantId: TenantId, filter: EventFilter, page: PageRequest): Promise<Page<EventRecord>> {
    const rows = await this.#db.all<Row>(
      `SELECT ${COLUMNS} FROM events WHERE tenant_id = @tenant_id AND ${filterSql(filter)} AND ${KEYSET_SQL} ORDER BY created_at DESC, id DESC LIMIT @limit`,
      { tenant_id: tenantId, ...typeParams(filter.type), ...callParam(filter), ...keysetParams(page.after), limit: page.limit + 1 },
    );
    const { items, next } = toPage(rows, page.limit);
    return { items: items.map(toRecord), next };
  }

  /** The tenant's events after `afterSeq` (a `Last-Event-ID`), oldest first, at most `limit`. */
  async after(tenantId: TenantId, afterSeq: number, filter: EventFilter, limit: number): Promise<EventRecord[]> {
    const rows = await this.#db.all<Row>(
      `SELECT ${COLUMNS} FROM events WHERE tenant_id = @tenant_id AND seq > @after AND ${filterSql(filter)} ORDER BY seq LIMIT @limit`,
      { tenant_id: tenantId, after: afterSeq, ...typeParams(filter.type), ...callParam(filter), limit },
    );
    return rows.map(toRecord);
  }

  /** The tenant's last sequence number (0 with no event): a stream without Last-Event-ID starts after it. */
  async latestSeq(tenantId: TenantId): Promise<number> {
    return Number((await this.#db.get<{ seq: number | string | null }>('SELECT max(seq) AS seq FROM events WHERE tenant_id = ?', [tenantId]))?.seq ?? 0);
  }

  /** Deletes events created before `before` (and, by cascade, their deliveries); how many. */
  async deleteBefore(before: string, limit = 1000): Promise<number> {
    return (await this.#db.run('DELETE FROM events WHERE seq IN (SELECT seq FROM events WHERE created_at < ? ORDER BY created_at LIMIT ?)', [before, limit])).changes;
  }
}

/** Whether an event passes a stream's filters (the same rules as {@link EventRepository.list}'s). */
export function matchesFilter(event: Pick<EventRecord, 'type' | 'call_id'>, filter: EventFilter): boolean {
  if (filter.callId !== undefined && event.call_id !== filter.callId) return false;
  if (filter.type === undefined) return true;
  return filter.type.endsWith('*') ? event.type.startsWith(filter.type.slice(0, -1)) : event.type === filter.type;
}
