/**
 * @module Idempotency keys (docs/API.md "Errors" and docs/API.md "Calls"): a reservation taken before a command runs,
 * completed with the response to replay, or released so a retry may run again. Keys live 24 h.
 */
import type { Clock } from '../common/clock.js';
import type { TenantId } from '../common/ids.js';
import { isoTime } from '../common/time.js';
import type { SqlExecutor } from './sql/sql-database.js';

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
  readonly #db: SqlExecutor;
  readonly #clock: Clock;

  constructor(db: SqlExecutor, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  /**
   * Takes the key for a new request, or reports what holds it. Expired rows (every tenant's) are
   * purged first, so an old key is free again; one transaction makes the check and the insert
   * atomic even beside another process on the same database (an IMMEDIATE one on SQLite; on
   * PostgreSQL the primary key on (tenant, key) refuses the second insert, reported as in flight).
   */
  async reserve(tenantId: TenantId, key: string, requestHash: string): Promise<IdempotencyReservation> {
    const now = this.#clock.now();
    try {
      return await this.#db.transaction(async (tx): Promise<IdempotencyReservation> => {
        await tx.run('DELETE FROM idempotency_keys WHERE created_at < ?', [isoTime(now - IDEMPOTENCY_TTL_MS)]);
        const row = await tx.get<Row>(
          'SELECT request_hash, response_status, response_json, created_at FROM idempotency_keys WHERE tenant_id = ? AND idempotency_key = ?', [tenantId, key],
        );
        if (row && row.response_status !== null && row.response_json !== null) {
          return { outcome: 'completed', requestHash: row.request_hash, status: row.response_status, responseJson: row.response_json };
        }
        if (row && row.created_at >= isoTime(now - IDEMPOTENCY_ABANDONED_MS)) return { outcome: 'in_flight', requestHash: row.request_hash };
        if (row) await tx.run('DELETE FROM idempotency_keys WHERE tenant_id = ? AND idempotency_key = ?', [tenantId, key]);
        await tx.run('INSERT INTO idempotency_keys (tenant_id, idempotency_key, request_hash, created_at) VALUES (?, ?, ?, ?)', [tenantId, key, requestHash, isoTime(now)]);
        return { outcome: 'reserved' };
      });
    } catch (err) {
      if (!this.#db.dialect.isUniqueViolation(err)) throw err;
      const holder = await this.#db.get<Row>('SELECT request_hash FROM idempotency_keys WHERE tenant_id = ? AND idempotency_key = ?', [tenantId, key]);
      return { outcome: 'in_flight', requestHash: holder?.request_hash ?? requestHash };
    }
  }

  /** Stores the response a reservation answered with; later requests with the key replay it. */
  async complete(tenantId: TenantId, key: string, status: number, responseJson: string): Promise<void> {
    await this.#db.run(
      'UPDATE idempotency_keys SET response_status = ?, response_json = ? WHERE tenant_id = ? AND idempotency_key = ? AND response_status IS NULL',
      [status, responseJson, tenantId, key],
    );
  }

  /** Frees a reservation whose outcome is not to be replayed (a 5xx), so a retry runs again. */
  async release(tenantId: TenantId, key: string): Promise<void> {
    await this.#db.run('DELETE FROM idempotency_keys WHERE tenant_id = ? AND idempotency_key = ? AND response_status IS NULL', [tenantId, key]);
  }
}
