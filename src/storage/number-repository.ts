/** @module Phone numbers (DIDs) held by tenants on carriers. */
import type { Clock } from '../common/clock.js';
import { newNumberId, type NumberId, type TenantId } from '../common/ids.js';
import { isoNow } from '../common/time.js';
import type { SqlExecutor } from './sql/sql-database.js';
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
  readonly #db: SqlExecutor;
  readonly #clock: Clock;

  constructor(db: SqlExecutor, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  /** Whether the tenant holds the number on that carrier now (the caller-ID policy `owned`, docs/API.md "Caller IDs"). */
  async isHeldOn(tenantId: TenantId, phoneNumber: string, carrier: string): Promise<boolean> {
    return (await this.#active(this.#db, phoneNumber, carrier))?.tenant_id === tenantId;
  }

  /** The tenant's active holding of a number (on any carrier; the newest if on several). */
  activeForTenant(tenantId: TenantId, phoneNumber: string): Promise<NumberRecord | undefined> {
    return this.#db.get<NumberRecord>(
      `SELECT ${COLUMNS} FROM numbers WHERE tenant_id = ? AND phone_number = ? AND status = 'active' ORDER BY created_at DESC, id DESC LIMIT 1`,
      [tenantId, phoneNumber],
    );
  }

  /**
   * Marks the tenant's number on a carrier released. `not_found` when the tenant never held it;
   * `already_released` when its latest holding is released. Run inside the release transaction.
   */
  async release(tenantId: TenantId, phoneNumber: string, carrier: string): Promise<{ outcome: 'released'; number: NumberRecord } | { outcome: 'not_found' | 'already_released' }> {
    const latest = await this.#db.get<NumberRecord>(
      `SELECT ${COLUMNS} FROM numbers WHERE tenant_id = ? AND phone_number = ? AND carrier = ?
        ORDER BY CASE status WHEN 'active' THEN 1 ELSE 0 END DESC, created_at DESC LIMIT 1`,
      [tenantId, phoneNumber, carrier],
    );
    if (!latest) return { outcome: 'not_found' };
    if (latest.status === 'released') return { outcome: 'already_released' };
    const releasedAt = isoNow(this.#clock);
    await this.#db.run(`UPDATE numbers SET status = 'released', released_at = ? WHERE id = ? AND status = 'active'`, [releasedAt, latest.id]);
    return { outcome: 'released', number: { ...latest, status: 'released', released_at: releasedAt } };
  }

  /** The unique index on active (number, carrier) decides between two concurrent adds; the loser reads who holds it. */
  async add(tenantId: TenantId, phoneNumber: string, carrier: string): Promise<AddNumberOutcome> {
    const held = async (): Promise<AddNumberOutcome | undefined> => {
      const holder = await this.#active(this.#db, phoneNumber, carrier);
      return holder && { ok: false, reason: holder.tenant_id === tenantId ? 'already_held' : 'held_by_another_tenant' };
    };
    try {
      return await this.#db.transaction(async (tx): Promise<AddNumberOutcome> => {
        const holder = await this.#active(tx, phoneNumber, carrier);
        if (holder) return { ok: false, reason: holder.tenant_id === tenantId ? 'already_held' : 'held_by_another_tenant' };
        const number: NumberRecord = {
          id: newNumberId(), tenant_id: tenantId, phone_number: phoneNumber, carrier, status: 'active',
          created_at: isoNow(this.#clock), released_at: null,
        };
        await tx.run(`INSERT INTO numbers (${COLUMNS}) VALUES (@id, @tenant_id, @phone_number, @carrier, @status, @created_at, @released_at)`, number);
        return { ok: true, number };
      });
    } catch (err) {
      if (!this.#db.dialect.isUniqueViolation(err)) throw err;
      const outcome = await held();
      if (!outcome) throw err;
      return outcome;
    }
  }

  /** The tenant's numbers, newest first (all tenants' when `tenantId` is null: operator CLI only). */
  async list(tenantId: TenantId | null, page: PageRequest): Promise<Page<NumberRecord>> {
    const params = { ...keysetParams(page.after), limit: page.limit + 1 };
    // Two statements, not one with `@tenant_id IS NULL OR ...`: that form hides the tenant term
    // from the planner, which then scanned every tenant's numbers for each page.
    const rows = tenantId === null
      ? await this.#db.all<NumberRecord>(`SELECT ${COLUMNS} FROM numbers WHERE ${KEYSET_SQL} ORDER BY created_at DESC, id DESC LIMIT @limit`, params)
      : await this.#db.all<NumberRecord>(
        `SELECT ${COLUMNS} FROM numbers WHERE tenant_id = @tenant_id AND ${KEYSET_SQL} ORDER BY created_at DESC, id DESC LIMIT @limit`, { tenant_id: tenantId, ...params },
      );
    return toPage(rows, page.limit);
  }

  #active(db: SqlExecutor, phoneNumber: string, carrier: string): Promise<NumberRecord | undefined> {
    return db.get<NumberRecord>(`SELECT ${COLUMNS} FROM numbers WHERE phone_number = ? AND carrier = ? AND status = 'active'`, [phoneNumber, carrier]);
  }
}
