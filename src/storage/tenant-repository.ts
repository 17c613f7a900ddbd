/** @module Tenants: the owners of every other resource. */
import type { Clock } from '../common/clock.js';
import { newTenantId, type TenantId } from '../common/ids.js';
import { isoNow } from '../common/time.js';
import type { Db } from './database.js';

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
  readonly #clock: Clock;

  constructor(db: Db, clock: Clock) {
    this.#clock = clock;
    this.#insert = db.prepare('INSERT INTO tenants (id, name, created_at) VALUES (@id, @name, @created_at)');
    this.#get = db.prepare<[string], TenantRecord>('SELECT id, name, created_at FROM tenants WHERE id = ?');
    this.#list = db.prepare<[], TenantRecord>('SELECT id, name, created_at FROM tenants ORDER BY created_at DESC, id DESC');
    this.#count = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM tenants');
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
