/** @module Inbound routes: a DID on a carrier bound to an imported agent. Deleted routes are kept. */
import type { Clock } from '../common/clock.js';
import { newRouteId, type AgentId, type RouteId, type TenantId } from '../common/ids.js';
import { isoNow } from '../common/time.js';
import type { Db } from './database.js';
import { KEYSET_SQL, keysetParams, toPage, type Page, type PageRequest } from './page.js';

export interface RouteRecord {
  id: RouteId;
  tenant_id: TenantId;
  did_number: string;
  carrier: string;
  agent_provider: 'external_bridge';
  agent_id: AgentId;
  created_at: string;
}

const COLUMNS = 'id, tenant_id, did_number, carrier, agent_provider, agent_id, created_at';

export class RouteRepository {
  readonly #clock: Clock;
  readonly #insert;
  readonly #get;
  readonly #list;
  readonly #delete;
  readonly #deleteForDid;
  readonly #liveForDid;

  constructor(db: Db, clock: Clock) {
    this.#clock = clock;
    this.#insert = db.prepare(`INSERT INTO routes (${COLUMNS}) VALUES (@id, @tenant_id, @did_number, @carrier, @agent_provider, @agent_id, @created_at)`);
    this.#get = db.prepare<[string, string], RouteRecord>(`SELECT ${COLUMNS} FROM routes WHERE tenant_id = ? AND id = ? AND deleted_at IS NULL`);
    this.#list = db.prepare<[Record<string, unknown>], RouteRecord>(
      `SELECT ${COLUMNS} FROM routes WHERE tenant_id = @tenant_id AND deleted_at IS NULL AND ${KEYSET_SQL} ORDER BY created_at DESC, id DESC LIMIT @limit`,
    );
    this.#delete = db.prepare<[string, string, string]>('UPDATE routes SET deleted_at = ? WHERE tenant_id = ? AND id = ? AND deleted_at IS NULL');
    this.#deleteForDid = db.prepare<[string, string, string, string]>(
      'UPDATE routes SET deleted_at = ? WHERE tenant_id = ? AND did_number = ? AND carrier = ? AND deleted_at IS NULL',
    );
    this.#liveForDid = db.prepare<[string, string], RouteRecord>(`SELECT ${COLUMNS} FROM routes WHERE did_number = ? AND carrier = ? AND deleted_at IS NULL`);
  }

  /** Inserts a route; call inside the transaction that creates its agent. */
  insert(tenantId: TenantId, input: { didNumber: string; carrier: string; agentId: AgentId }): RouteRecord {
    const route: RouteRecord = {
      id: newRouteId(), tenant_id: tenantId, did_number: input.didNumber, carrier: input.carrier,
      agent_provider: 'external_bridge', agent_id: input.agentId, created_at: isoNow(this.#clock),
    };
    this.#insert.run(route);
    return route;
  }

  get(tenantId: TenantId, id: string): RouteRecord | undefined {
    return this.#get.get(tenantId, id);
  }

  list(tenantId: TenantId, page: PageRequest): Page<RouteRecord> {
    return toPage(this.#list.all({ tenant_id: tenantId, ...keysetParams(page.after), limit: page.limit + 1 }), page.limit);
  }

  delete(tenantId: TenantId, id: string): boolean {
    return this.#delete.run(isoNow(this.#clock), tenantId, id).changes === 1;
  }

  /** Removes the tenant's live routes of a DID (number release); returns how many. */
  deleteForDid(tenantId: TenantId, didNumber: string, carrier: string): number {
    return this.#deleteForDid.run(isoNow(this.#clock), tenantId, didNumber, carrier).changes;
  }

  /** The live route of a DID on a carrier, whoever holds it (inbound INVITE routing). */
  liveForDid(didNumber: string, carrier: string): RouteRecord | undefined {
    return this.#liveForDid.get(didNumber, carrier);
  }
}
