/**
 * @module Verified caller IDs (docs/API.md "Caller IDs"): numbers the operator checked a tenant
 * may present as the calling number without holding them on the carrier.
 */
import type { Clock } from '../common/clock.js';
import { newCallerIdId, type CallerIdId, type TenantId } from '../common/ids.js';
import { isoNow } from '../common/time.js';
import type { SqlExecutor } from './sql/sql-database.js';
import { KEYSET_SQL, keysetParams, toPage, type Page, type PageRequest } from './page.js';

export interface CallerIdRecord {
  id: CallerIdId;
  tenant_id: TenantId;
  phone_number: string;
  created_at: string;
}

export type AddCallerIdOutcome = { ok: true; callerId: CallerIdRecord } | { ok: false; reason: 'already_verified' };

const COLUMNS = 'id, tenant_id, phone_number, created_at';

export class CallerIdRepository {
  readonly #db: SqlExecutor;
  readonly #clock: Clock;

  constructor(db: SqlExecutor, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  /** Verifies a number for the tenant; each tenant's verification is its own (two tenants may verify one number). */
  async add(tenantId: TenantId, phoneNumber: string): Promise<AddCallerIdOutcome> {
    const callerId: CallerIdRecord = { id: newCallerIdId(), tenant_id: tenantId, phone_number: phoneNumber, created_at: isoNow(this.#clock) };
    const { changes } = await this.#db.run(
      `INSERT INTO caller_ids (${COLUMNS}) VALUES (@id, @tenant_id, @phone_number, @created_at) ON CONFLICT (tenant_id, phone_number) DO NOTHING`, callerId,
    );
    return changes === 1 ? { ok: true, callerId } : { ok: false, reason: 'already_verified' };
  }

  async isVerified(tenantId: TenantId, phoneNumber: string): Promise<boolean> {
    return (await this.#db.get(`SELECT ${COLUMNS} FROM caller_ids WHERE tenant_id = ? AND phone_number = ?`, [tenantId, phoneNumber])) !== undefined;
  }

  /** The tenant's verified caller IDs, newest first. */
  async list(tenantId: TenantId, page: PageRequest): Promise<Page<CallerIdRecord>> {
    const rows = await this.#db.all<CallerIdRecord>(
      `SELECT ${COLUMNS} FROM caller_ids WHERE tenant_id = @tenant_id AND ${KEYSET_SQL} ORDER BY created_at DESC, id DESC LIMIT @limit`,
      { tenant_id: tenantId, ...keysetParams(page.after), limit: page.limit + 1 },
    );
    return toPage(rows, page.limit);
  }
}
