/** @module Tenants: the owners of every other resource. */
import type { Clock } from '../common/clock.js';
import { newTenantId, type TenantId } from '../common/ids.js';
import { isoNow } from '../common/time.js';
import type { SqlExecutor } from './sql/sql-database.js';
import type { AgentTransferPolicy } from './agent-repository.js';

export interface TenantRecord {
  id: TenantId;
  name: string;
  created_at: string;
}

const TENANT_COLUMNS = 'id, name, created_at';

export class TenantRepository {
  readonly #db: SqlExecutor;
  readonly #clock: Clock;

  constructor(db: SqlExecutor, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  /** The tenant's default transfer policy, for agents without their own; null for none (docs/API.md "Transfers asked by the agent"). */
  async transferPolicy(id: TenantId): Promise<AgentTransferPolicy | null> {
    const text = (await this.#db.get<{ transfer_policy: string | null }>('SELECT transfer_policy FROM tenants WHERE id = ?', [id]))?.transfer_policy ?? null;
    return text === null ? null : JSON.parse(text) as AgentTransferPolicy;
  }

  /** Replaces the tenant's default transfer policy (null: none); false when there is no such tenant. */
  async setTransferPolicy(id: TenantId, policy: AgentTransferPolicy | null): Promise<boolean> {
    const text = policy === null ? null : JSON.stringify({ allow: policy.allow, max_per_call: policy.max_per_call });
    return (await this.#db.run('UPDATE tenants SET transfer_policy = ? WHERE id = ?', [text, id])).changes === 1;
  }

  async create(name: string): Promise<TenantRecord> {
    const tenant: TenantRecord = { id: newTenantId(), name, created_at: isoNow(this.#clock) };
    await this.#db.run('INSERT INTO tenants (id, name, created_at) VALUES (@id, @name, @created_at)', tenant);
    return tenant;
  }

  get(id: TenantId): Promise<TenantRecord | undefined> {
    return this.#db.get<TenantRecord>(`SELECT ${TENANT_COLUMNS} FROM tenants WHERE id = ?`, [id]);
  }

  list(): Promise<TenantRecord[]> {
    return this.#db.all<TenantRecord>(`SELECT ${TENANT_COLUMNS} FROM tenants ORDER BY created_at DESC, id DESC`);
  }

  async count(): Promise<number> {
    return Number((await this.#db.get<{ n: number | string }>('SELECT count(*) AS n FROM tenants'))?.n ?? 0);
  }
}
