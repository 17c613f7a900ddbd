/** @module Tenants: the owners of every other resource. */
import type { Clock } from '../common/clock.js';
import { newTenantId, type TenantId } from '../common/ids.js';
import { isoNow } from '../common/time.js';
import type { Db } from './database.js';
import type { AgentTransferPolicy } from './agent-repository.js';

export interface TenantRecord {
  id: TenantId;
  name: string;
  created_at: string;
}

export class TenantRepository {
  readonly #insert;
  readonly #get;
  readonly #list;
  readonly #count;
  readonly #transferPolicy;
  readonly #setTransferPolicy;
  readonly #clock: Clock;

  constructor(db: Db, clock: Clock) {
    this.#clock = clock;
    this.#insert = db.prepare('INSERT INTO tenants (id, name, created_at) VALUES (@id, @name, @created_at)');
    this.#get = db.prepare<[string], TenantRecord>('SELECT id, name, created_at FROM tenants WHERE id = ?');
    this.#list = db.prepare<[], TenantRecord>('SELECT id, name, created_at FROM tenants ORDER BY created_at DESC, id DESC');
    this.#count = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM tenants');
    this.#transferPolicy = db.prepare<[string], { transfer_policy: string | null }>('SELECT transfer_policy FROM tenants WHERE id = ?');
    this.#setTransferPolicy = db.prepare<[string | null, string]>('UPDATE tenants SET transfer_policy = ? WHERE id = ?');
  }

  /** The tenant's default transfer policy, for agents without their own; null for none (docs/API.md "Transfers asked by the agent"). */
  transferPolicy(id: TenantId): AgentTransferPolicy | null {
    const text = this.#transferPolicy.get(id)?.transfer_policy ?? null;
    return text === null ? null : JSON.parse(text) as AgentTransferPolicy;
  }

  /** Replaces the tenant's default transfer policy (null: none); false when there is no such tenant. */
  setTransferPolicy(id: TenantId, policy: AgentTransferPolicy | null): boolean {
    return this.#setTransferPolicy.run(policy === null ? null : JSON.stringify({ allow: policy.allow, max_per_call: policy.max_per_call }), id).changes === 1;
  }

  create(name: string): TenantRecord {
    const tenant: TenantRecord = { id: newTenantId(), name, created_at: isoNow(this.#clock) };
    this.#insert.run(tenant);
    return tenant;
  }

  get(id: TenantId): TenantRecord | undefined {
    return this.#get.get(id);
  }

  list(): TenantRecord[] {
    return this.#list.all();
  }

  count(): number {
    return this.#count.get()?.n ?? 0;
  }
}
