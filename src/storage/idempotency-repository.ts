/**
 * @module Idempotency keys (docs/API.md "Errors" and docs/API.md "Calls"): a reservation taken before a command runs,
 * completed with the response to replay, or released so a retry may run again. Keys live 24 h.
 */
import type { Clock } from '../common/clock.js';
import type { TenantId } from '../common/ids.js';
import { isoTime } from '../common/time.js';
import type { Db } from './database.js';

/** How long a key replays its first response (docs/API.md "Calls"). */
export const IDEMPOTENCY_TTL_MS = 24 * 3600_000;
/**
 * A reservation never completed for this long belongs to a process that died mid-request; a retry
 * may take it over. Commands answer in well under a second, so this never cuts a live request.
 */
export const IDEMPOTENCY_ABANDONED_MS = 5 * 60_000;

/** What reserving a key found. */
export type IdempotencyReservation =
  /** The key was free (or expired): the caller runs the command, then completes or releases. */
  | { outcome: 'reserved' }
  /** Another request with this key has not answered yet. */
  | { outcome: 'in_flight'; requestHash: string }
  /** The key was answered before: replay this response (if the request hash matches). */
  | { outcome: 'completed'; requestHash: string; status: number; responseJson: string };

interface Row {
  request_hash: string;
  response_status: number | null;
  response_json: string | null;
  created_at: string;
}

export class IdempotencyRepository {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #purge;
  readonly #find;
  readonly #drop;
  readonly #insert;
  readonly #complete;
  readonly #release;

  constructor(db: Db, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
    this.#purge = db.prepare<[string]>('DELETE FROM idempotency_keys WHERE created_at < ?');
    this.#find = db.prepare<[string, string], Row>(
      'SELECT request_hash, response_status, response_json, created_at FROM idempotency_keys WHERE tenant_id = ? AND idempotency_key = ?',
    );
    this.#drop = db.prepare<[string, string]>('DELETE FROM idempotency_keys WHERE tenant_id = ? AND idempotency_key = ?');
    this.#insert = db.prepare<[string, string, string, string]>(
      'INSERT INTO idempotency_keys (tenant_id, idempotency_key, request_hash, created_at) VALUES (?, ?, ?, ?)',
    );
    this.#complete = db.prepare<[number, string, string, string]>(
      'UPDATE idempotency_keys SET response_status = ?, response_json = ? WHERE tenant_id = ? AND idempotency_key = ? AND response_status IS NULL',
    );
    this.#release = db.prepare<[string, string]>(
      'DELETE FROM idempotency_keys WHERE tenant_id = ? AND idempotency_key = ? AND response_status IS NULL',
    );
  }

  /**
   * Takes the key for a new request, or reports what holds it. Expired rows (every tenant's) are
   * purged first, so an old key is free again; one IMMEDIATE transaction makes the check and the
   * insert atomic even beside another process on the same database.
   */
  reserve(tenantId: TenantId, key: string, requestHash: string): IdempotencyReservation {
    const now = this.#clock.now();
    return this.#db.transaction((): IdempotencyReservation => {
      this.#purge.run(isoTime(now - IDEMPOTENCY_TTL_MS));
      const row = this.#find.get(tenantId, key);
      if (row && row.response_status !== null && row.response_json !== null) {
        return { outcome: 'completed', requestHash: row.request_hash, status: row.response_status, responseJson: row.response_json };
      }
      if (row && row.created_at >= isoTime(now - IDEMPOTENCY_ABANDONED_MS)) return { outcome: 'in_flight', requestHash: row.request_hash };
      if (row) this.#drop.run(tenantId, key);
      this.#insert.run(tenantId, key, requestHash, isoTime(now));
      return { outcome: 'reserved' };
    }).immediate();
  }

  /** Stores the response a reservation answered with; later requests with the key replay it. */
  complete(tenantId: TenantId, key: string, status: number, responseJson: string): void {
    this.#complete.run(status, responseJson, tenantId, key);
  }

  /** Frees a reservation whose outcome is not to be replayed (a 5xx), so a retry runs again. */
  release(tenantId: TenantId, key: string): void {
    this.#release.run(tenantId, key);
  }
}
