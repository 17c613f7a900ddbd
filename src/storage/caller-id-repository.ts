/**
 * @module Verified caller IDs (docs/API.md "Caller IDs"): numbers the operator checked a tenant
 * may present as the calling number without holding them on the carrier.
 */
import type { Clock } from '../common/clock.js';
import { newCallerIdId, type CallerIdId, type TenantId } from '../common/ids.js';
import { isoNow } from '../common/time.js';
import type { Db } from './database.js';
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
  readonly #clock: Clock;
  readonly #insert;
  readonly #find;
  readonly #list;

  constructor(db: Db, clock: Clock) {
    this.#clock = clock;
    this.#insert = db.prepare(`INSERT INTO caller_ids (${COLUMNS}) VALUES (@id, @tenant_id, @phone_number, @created_at) ON CONFLICT (tenant_id, phone_number) DO NOTHING`);
    this.#find = db.prepare<[string, string], CallerIdRecord>(`SELECT ${COLUMNS} FROM caller_ids WHERE tenant_id = ? AND phone_number = ?`);
    this.#list = db.prepare<[Record<string, unknown>], CallerIdRecord>(
      `SELECT ${COLUMNS} FROM caller_ids WHERE tenant_id = @tenant_id AND ${KEYSET_SQL} ORDER BY created_at DESC, id DESC LIMIT @limit`,
    );
  }

  /** Verifies a number for the tenant; each tenant's verification is its own (two tenants may verify one number). */
  add(tenantId: TenantId, phoneNumber: string): AddCallerIdOutcome {
    const callerId: CallerIdRecord = { id: newCallerIdId(), tenant_id: tenantId, phone_number: phoneNumber, created_at: isoNow(this.#clock) };
    return this.#insert.run(callerId).changes === 1 ? { ok: true, callerId } : { ok: false, reason: 'already_verified' };
  }

  isVerified(tenantId: TenantId, phoneNumber: string): boolean {
    return this.#find.get(tenantId, phoneNumber) !== undefined;
  }

  /** The tenant's verified caller IDs, newest first. */
  list(tenantId: TenantId, page: PageRequest): Page<CallerIdRecord> {
    return toPage(this.#list.all({ tenant_id: tenantId, ...keysetParams(page.after), limit: page.limit + 1 }), page.limit);
  }
}
