/** @module Phone numbers (DIDs) held by tenants on carriers. */
import type { Clock } from '../common/clock.js';
import { newNumberId, type NumberId, type TenantId } from '../common/ids.js';
import { isoNow } from '../common/time.js';
import type { Db } from './database.js';
import { KEYSET_SQL, keysetParams, toPage, type Page, type PageRequest } from './page.js';

export interface NumberRecord {
  id: NumberId;
  tenant_id: TenantId;
  phone_number: string;
  carrier: string;
  status: 'active' | 'released';
  created_at: string;
  released_at: string | null;
}

/** Why a number could not be added. */
export type AddNumberOutcome = { ok: true; number: NumberRecord } | { ok: false; reason: 'held_by_another_tenant' | 'already_held' };

const COLUMNS = 'id, tenant_id, phone_number, carrier, status, created_at, released_at';

export class NumberRepository {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #insert;
  readonly #active;
  readonly #list;
  readonly #listAll;
  readonly #heldBy;
  readonly #latest;
  readonly #release;

  constructor(db: Db, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
    this.#insert = db.prepare(
      `INSERT INTO numbers (${COLUMNS}) VALUES (@id, @tenant_id, @phone_number, @carrier, @status, @created_at, @released_at)`,
    );
    this.#active = db.prepare<[string, string], NumberRecord>(
      `SELECT ${COLUMNS} FROM numbers WHERE phone_number = ? AND carrier = ? AND status = 'active'`,
    );
    // Two statements, not one with `@tenant_id IS NULL OR ...`: that form hides the tenant term
    // from the planner, which then scanned every tenant's numbers for each page.
    this.#list = db.prepare<[Record<string, unknown>], NumberRecord>(
      `SELECT ${COLUMNS} FROM numbers WHERE tenant_id = @tenant_id AND ${KEYSET_SQL} ORDER BY created_at DESC, id DESC LIMIT @limit`,
    );
    this.#listAll = db.prepare<[Record<string, unknown>], NumberRecord>(
      `SELECT ${COLUMNS} FROM numbers WHERE ${KEYSET_SQL} ORDER BY created_at DESC, id DESC LIMIT @limit`,
    );
    this.#heldBy = db.prepare<[string, string], NumberRecord>(
      `SELECT ${COLUMNS} FROM numbers WHERE tenant_id = ? AND phone_number = ? AND status = 'active' ORDER BY created_at DESC, id DESC LIMIT 1`,
    );
    this.#latest = db.prepare<[string, string, string], NumberRecord>(
      `SELECT ${COLUMNS} FROM numbers WHERE tenant_id = ? AND phone_number = ? AND carrier = ? ORDER BY status = 'active' DESC, created_at DESC LIMIT 1`,
    );
    this.#release = db.prepare<[string, string]>(`UPDATE numbers SET status = 'released', released_at = ? WHERE id = ? AND status = 'active'`);
  }

  /** Whether the tenant holds the number on that carrier now (the caller-ID policy `owned`, docs/API.md "Caller IDs"). */
  isHeldOn(tenantId: TenantId, phoneNumber: string, carrier: string): boolean {
    return this.#active.get(phoneNumber, carrier)?.tenant_id === tenantId;
  }

  /** The tenant's active holding of a number (on any carrier; the newest if on several). */
  activeForTenant(tenantId: TenantId, phoneNumber: string): NumberRecord | undefined {
    return this.#heldBy.get(tenantId, phoneNumber);
  }

  /**
   * Marks the tenant's number on a carrier released. `not_found` when the tenant never held it;
   * `already_released` when its latest holding is released. Run inside the release transaction.
   */
  release(tenantId: TenantId, phoneNumber: string, carrier: string): { outcome: 'released'; number: NumberRecord } | { outcome: 'not_found' | 'already_released' } {
    const latest = this.#latest.get(tenantId, phoneNumber, carrier);
    if (!latest) return { outcome: 'not_found' };
    if (latest.status === 'released') return { outcome: 'already_released' };
    const releasedAt = isoNow(this.#clock);
    this.#release.run(releasedAt, latest.id);
    return { outcome: 'released', number: { ...latest, status: 'released', released_at: releasedAt } };
  }

  add(tenantId: TenantId, phoneNumber: string, carrier: string): AddNumberOutcome {
    return this.#db.transaction((): AddNumberOutcome => {
      const holder = this.#active.get(phoneNumber, carrier);
      if (holder) return { ok: false, reason: holder.tenant_id === tenantId ? 'already_held' : 'held_by_another_tenant' };
      const number: NumberRecord = {
        id: newNumberId(), tenant_id: tenantId, phone_number: phoneNumber, carrier, status: 'active',
        created_at: isoNow(this.#clock), released_at: null,
      };
      this.#insert.run(number);
      return { ok: true, number };
    }).immediate();
  }

  /** The tenant's numbers, newest first (all tenants' when `tenantId` is null: operator CLI only). */
  list(tenantId: TenantId | null, page: PageRequest): Page<NumberRecord> {
    const params = { ...keysetParams(page.after), limit: page.limit + 1 };
    const rows = tenantId === null ? this.#listAll.all(params) : this.#list.all({ tenant_id: tenantId, ...params });
    return toPage(rows, page.limit);
  }

}
