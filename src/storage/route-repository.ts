/** @module Inbound routes: a DID on a carrier bound to an imported agent. Deleted routes are kept. */
import type { Clock } from '../common/clock.js';
import { newRouteId, type AgentId, type RouteId, type TenantId } from '../common/ids.js';
import { isoNow } from '../common/time.js';
import type { SqlExecutor } from './sql/sql-database.js';
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
  readonly #db: SqlExecutor;
  readonly #clock: Clock;

  constructor(db: SqlExecutor, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  /** Inserts a route; call inside the transaction that creates its agent. */
  async insert(tenantId: TenantId, input: { didNumber: string; carrier: string; agentId: AgentId }): Promise<RouteRecord> {
    const route: RouteRecord = {
      id: newRouteId(), tenant_id: tenantId, did_number: input.didNumber, carrier: input.carrier,
      agent_provider: 'external_bridge', agent_id: input.agentId, created_at: isoNow(this.#clock),
    };
    await this.#db.run(`INSERT INTO routes (${COLUMNS}) VALUES (@id, @tenant_id, @did_number, @carrier, @agent_provider, @agent_id, @created_at)`, route);
    return route;
  }

  get(tenantId: TenantId, id: string): Promise<RouteRecord | undefined> {
    return this.#db.get<RouteRecord>(`SELECT ${COLUMNS} FROM routes WHERE tenant_id = ? AND id = ? AND deleted_at IS NULL`, [tenantId, id]);
  }

  async list(tenantId: TenantId, page: PageRequest): Promise<Page<RouteRecord>> {
    const rows = await this.#db.all<RouteRecord>(
      `SELECT ${COLUMNS} FROM routes WHERE tenant_id = @tenant_id AND deleted_at IS NULL AND ${KEYSET_SQL} ORDER BY created_at DESC, id DESC LIMIT @limit`,
      { tenant_id: tenantId, ...keysetParams(page.after), limit: page.limit + 1 },
    );
    return toPage(rows, page.limit);
  }

  async delete(tenantId: TenantId, id: string): Promise<boolean> {
    return (await this.#db.run('UPDATE routes SET deleted_at = ? WHERE tenant_id = ? AND id = ? AND deleted_at IS NULL', [isoNow(this.#clock), tenantId, id])).changes === 1;
  }

  /** Removes the tenant's live routes of a DID (number release); returns how many. */
  async deleteForDid(tenantId: TenantId, didNumber: string, carrier: string): Promise<number> {
    return (await this.#db.run(
      'UPDATE routes SET deleted_at = ? WHERE tenant_id = ? AND did_number = ? AND carrier = ? AND deleted_at IS NULL', [isoNow(this.#clock), tenantId, didNumber, carrier],
    )).changes;
  }

  /** The live route of a DID on a carrier, whoever holds it (inbound INVITE routing). */
  liveForDid(didNumber: string, carrier: string): Promise<RouteRecord | undefined> {
    return this.#db.get<RouteRecord>(`SELECT ${COLUMNS} FROM routes WHERE did_number = ? AND carrier = ? AND deleted_at IS NULL`, [didNumber, carrier]);
  }
}
