/**
 * @module Deliveries of events to endpoints and their attempts (docs/EVENTS.md "Delivery",
 * "Retries"): what is due (a call's next event waits until its previous one to the same endpoint
 * is delivered or failed), each attempt's outcome for the delivery log, and redelivery.
 */
import type { Clock } from '../common/clock.js';
import { newDeliveryAttemptId, type TenantId } from '../common/ids.js';
import { isoNow, isoTime } from '../common/time.js';
import { subscribes, type EventType } from '../events/event-types.js';
import type { SqlExecutor } from './sql/sql-database.js';
import { claimSql, listParam, ofCallsSql, ofEventsSql, pairsParams, scanSql, stillDueSql } from './event-delivery-sql.js';
import { KEYSET_SQL, keysetParams, toPage, type Page, type PageRequest } from './page.js';

export type DeliveryState = 'pending' | 'delivered' | 'failed';

/** A delivery due now, with what an attempt needs. */
export interface DueDelivery {
  id: number;
  tenant_id: TenantId;
  endpoint_id: string;
  url: string;
  call_id: string | null;
  event_id: string;
  event_type: EventType;
  payload: string;
  attempts: number;
  window_started_at: string;
}

export interface DeliveryAttemptRecord {
  id: string;
  event_id: string;
  endpoint_id: string;
  attempt: number;
  ok: boolean;
  status: number | null;
  duration_ms: number;
  error: string | null;
  response_body: string | null;
  /** When the delivery is tried again; null when it succeeded or failed for good. */
  next_attempt_at: string | null;
  created_at: string;
}

export interface AttemptOutcome {
  ok: boolean;
  status: number | null;
  durationMs: number;
  error: string | null;
  responseBody: string | null;
  /** The next attempt's time; null: no more attempts (delivered, or failed for good). */
  nextAttemptAt: string | null;
}

/** Who claims deliveries (a node id) and for how long, when a sender takes them to send. */
export interface DeliveryClaimant {
  by: string;
  forMs: number;
}

/** What an attempt's record needs of its delivery. */
export type AttemptedDelivery = Pick<DueDelivery, 'id' | 'tenant_id' | 'endpoint_id' | 'event_id' | 'attempts'>;

/** At most how many deliveries of one tenant, and of one endpoint, a scan reads. */
export interface ScanCaps {
  perTenant: number;
  perEndpoint: number;
}

type DueRow = Omit<DueDelivery, 'id' | 'attempts'> & { id: number | string; attempts: number | string };
type AttemptRow = Omit<DeliveryAttemptRecord, 'ok' | 'attempt' | 'duration_ms'> & { ok: number; attempt: number | string; duration_ms: number | string };

export class EventDeliveryRepository {
  readonly #db: SqlExecutor;
  readonly #clock: Clock;

  constructor(db: SqlExecutor, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  /** Deliveries due now, oldest first, at most `limit`. */
  async due(limit: number): Promise<DueDelivery[]> {
    return (await this.scan(limit, { perTenant: limit, perEndpoint: limit })).due;
  }

  /**
   * Deliveries due now, oldest first, at most `limit` and `caps` of each tenant and endpoint, so
   * a tenant with thousands due to a dead endpoint never hides another's; and the endpoints
   * (with their tenant) that have more due than the page holds.
   */
  async scan(limit: number, caps: ScanCaps): Promise<{ due: DueDelivery[]; unread: Map<string, TenantId> }> {
    const rows = await this.#db.all<DueRow & { endpoint_due: number | string }>(scanSql, {
      now: isoNow(this.#clock), limit, per_tenant: caps.perTenant, per_endpoint: caps.perEndpoint,
    });
    const read = new Map<string, number>();
    for (const r of rows) read.set(r.endpoint_id, (read.get(r.endpoint_id) ?? 0) + 1);
    const unread = new Map<string, TenantId>();
    for (const r of rows) if (Number(r.endpoint_due) > read.get(r.endpoint_id)!) unread.set(r.endpoint_id, r.tenant_id);
    return { due: rows.map(({ endpoint_due: _, ...r }) => ({ ...r, id: Number(r.id), attempts: Number(r.attempts) })), unread };
  }

  /** The due deliveries of the events named (by `seq`): those just written, without a scan. */
  async dueOf(eventSeqs: readonly number[]): Promise<DueDelivery[]> {
    if (eventSeqs.length === 0) return [];
    return this.#rows(ofEventsSql(this.#db.dialect), { now: isoNow(this.#clock), seqs: listParam(this.#db.dialect, eventSeqs) });
  }

  /**
   * The next deliveries of calls whose delivery to an endpoint just ended, in one read: of each
   * call and endpoint named, the delivery due now, if any.
   */
  async nextOfCalls(ended: readonly { endpointId: string; callId: string }[]): Promise<DueDelivery[]> {
    if (ended.length === 0) return [];
    return this.#rows(ofCallsSql(this.#db.dialect), { now: isoNow(this.#clock), ...pairsParams(this.#db.dialect, ended) });
  }

  /**
   * Claims the deliveries named that are still due, for one sender among several on this store,
   * and returns their ids: one read a moment ago and claimed meanwhile by another sender, sent,
   * or held back since is left out (the claim checks the condition of {@link due} again as it
   * writes, on PostgreSQL after waiting for the other claimer's commit), so each is sent by one.
   */
  async claim(ids: readonly number[], claimant: DeliveryClaimant): Promise<Set<number>> {
    return this.#stillDueOf(claimSql, ids, { by: claimant.by, until: isoTime(this.#clock.now() + claimant.forMs) });
  }

  /**
   * The deliveries named that are still due, checked as {@link claim} checks them but without
   * writing a claim: for the one sender of an outbox no other process sends from (the `all`
   * role on its own SQLite file), whose deliveries in flight are known in its memory.
   */
  async stillDue(ids: readonly number[]): Promise<Set<number>> {
    return this.#stillDueOf(stillDueSql, ids, {});
  }

  /** The ids that `sql` (claimSql or stillDueSql) returns of `ids`: those still due now. */
  async #stillDueOf(sql: (dialect: SqlExecutor['dialect']) => string, ids: readonly number[], params: object): Promise<Set<number>> {
    if (ids.length === 0) return new Set();
    const { dialect } = this.#db;
    const rows = await this.#db.all<{ id: number | string }>(sql(dialect), { ...params, ids: listParam(dialect, ids), now: isoNow(this.#clock) });
    return new Set(rows.map((r) => Number(r.id)));
  }

  /** Drops every claim of `by`: a previous run's, left by a kill -9 (their deliveries are due again now). */
  async releaseClaims(by: string): Promise<number> {
    return (await this.#db.run("UPDATE event_deliveries SET claimed_by = NULL, claimed_until = NULL WHERE claimed_by = ? AND state = 'pending'", [by])).changes;
  }

  async #rows(sql: string, params: object): Promise<DueDelivery[]> {
    const rows = await this.#db.all<DueRow>(sql, params);
    return rows.map((r) => ({ ...r, id: Number(r.id), attempts: Number(r.attempts) }));
  }

  /**
   * Records one attempt and moves the delivery on: delivered, failed for good, or pending until
   * the next attempt. Returns the delivery's new state (undefined when it is gone: its endpoint
   * or event was deleted meanwhile).
   */
  async recordAttempt(delivery: AttemptedDelivery, outcome: AttemptOutcome): Promise<DeliveryState | undefined> {
    return (await this.recordAttempts([{ delivery, outcome }]))[0];
  }

  /** {@link recordAttempt} for several attempts, in one transaction; the states in the same order. */
  async recordAttempts(attempts: readonly { delivery: AttemptedDelivery; outcome: AttemptOutcome }[]): Promise<(DeliveryState | undefined)[]> {
    const now = isoNow(this.#clock);
    return this.#db.transaction(async (tx) => {
      const states: (DeliveryState | undefined)[] = [];
      for (const { delivery, outcome } of attempts) {
        const state: DeliveryState = outcome.ok ? 'delivered' : outcome.nextAttemptAt === null ? 'failed' : 'pending';
        const { changes } = await tx.run(
          `UPDATE event_deliveries SET state = ?, attempts = attempts + 1, next_attempt_at = ?, claimed_by = NULL, claimed_until = NULL, updated_at = ?
            WHERE id = ? AND state = 'pending'`,
          [state, state === 'pending' ? outcome.nextAttemptAt : null, now, delivery.id],
        );
        if (changes === 0) {
          states.push(undefined);
          continue;
        }
        await tx.run(
          `INSERT INTO event_delivery_attempts (id, delivery_id, endpoint_id, tenant_id, event_id, attempt, status, ok, duration_ms, error, response_body, next_attempt_at, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          [newDeliveryAttemptId(), delivery.id, delivery.endpoint_id, delivery.tenant_id, delivery.event_id, delivery.attempts + 1, outcome.status,
            outcome.ok ? 1 : 0, outcome.durationMs, outcome.error, outcome.responseBody, state === 'pending' ? outcome.nextAttemptAt : null, now],
        );
        states.push(state);
      }
      return states;
    });
  }

  /** A page of an endpoint's attempts, newest first. */
  async attempts(tenantId: TenantId, endpointId: string, page: PageRequest): Promise<Page<DeliveryAttemptRecord>> {
    const rows = await this.#db.all<AttemptRow>(
      `SELECT id, event_id, endpoint_id, attempt, ok, status, duration_ms, error, response_body, next_attempt_at, created_at
         FROM event_delivery_attempts WHERE tenant_id = @tenant_id AND endpoint_id = @endpoint_id AND ${KEYSET_SQL}
        ORDER BY created_at DESC, id DESC LIMIT @limit`,
      { tenant_id: tenantId, endpoint_id: endpointId, ...keysetParams(page.after), limit: page.limit + 1 },
    );
    const { items, next } = toPage(rows, page.limit);
    return { items: items.map((r) => ({ ...r, ok: r.ok === 1, attempt: Number(r.attempt), duration_ms: Number(r.duration_ms) })), next };
  }

  /** The state of each delivery of an event, by endpoint (tests and the sender's bookkeeping). */
  async statesOf(tenantId: TenantId, eventId: string): Promise<{ endpoint_id: string; state: DeliveryState; attempts: number }[]> {
    const rows = await this.#db.all<{ endpoint_id: string; state: DeliveryState; attempts: number | string }>(
      'SELECT d.endpoint_id, d.state, d.attempts FROM event_deliveries d JOIN events e ON e.seq = d.event_seq WHERE e.tenant_id = ? AND e.id = ? ORDER BY d.id',
      [tenantId, eventId],
    );
    return rows.map((r) => ({ ...r, attempts: Number(r.attempts) }));
  }

  /**
   * Sends the event again (POST /v1/events/{id}/redeliver): every delivery of it becomes pending
   * and due now with a new 24-hour window, and an enabled endpoint that subscribes to its type but
   * had none (created since) gets one. Returns the number of deliveries scheduled.
   */
  async redeliver(tenantId: TenantId, eventId: string): Promise<number> {
    const now = isoNow(this.#clock);
    return this.#db.transaction(async (tx) => {
      const event = await tx.get<{ seq: number | string; type: EventType; call_id: string | null }>('SELECT seq, type, call_id FROM events WHERE tenant_id = ? AND id = ?', [tenantId, eventId]);
      if (!event) return 0;
      await tx.run(
        "UPDATE event_deliveries SET state = 'pending', next_attempt_at = ?, window_started_at = ?, updated_at = ? WHERE event_seq = ?",
        [now, now, now, event.seq],
      );
      const endpoints = await tx.all<{ id: string; events: string }>(
        'SELECT id, events FROM webhook_endpoints w WHERE tenant_id = ? AND disabled = 0 AND NOT EXISTS (SELECT 1 FROM event_deliveries d WHERE d.event_seq = ? AND d.endpoint_id = w.id)',
        [tenantId, event.seq],
      );
      for (const endpoint of endpoints.filter((e) => subscribes(JSON.parse(e.events) as string[], event.type))) {
        await tx.run(
          `INSERT INTO event_deliveries (event_seq, endpoint_id, tenant_id, call_id, state, attempts, next_attempt_at, window_started_at, updated_at)
           VALUES (?, ?, ?, ?, 'pending', 0, ?, ?, ?)`,
          [event.seq, endpoint.id, tenantId, event.call_id, now, now, now],
        );
      }
      const count = await tx.get<{ n: number | string }>('SELECT count(*) AS n FROM event_deliveries WHERE event_seq = ?', [event.seq]);
      return Number(count?.n ?? 0);
    });
  }
}
