/**
 * @module Imported agents. The provider key is sealed at rest and leaves this module only as
 * `api_key_set` / `api_key_last4`, or in clear through {@link AgentRepository.apiKey} at call time.
 */
import type { Clock } from '../common/clock.js';
import { newAgentId, type AgentId, type SipCredentialId, type TenantId } from '../common/ids.js';
import type { SecretBox } from '../common/secret-box.js';
import { isoNow } from '../common/time.js';
import type { SqlExecutor } from './sql/sql-database.js';
import { KEYSET_SQL, keysetParams, toPage, type Page, type PageRequest } from './page.js';

/** The fields a tenant sets on import and may change with PUT. */
export interface AgentSettings {
  name: string | null;
  connection_mode: 'sip_trunk' | 'media_bridge';
  region: string;
  sip_credential_id: SipCredentialId | null;
  sip_uri: string | null;
  sip_transport: 'udp' | 'tcp' | 'tls' | null;
  sip_region: string | null;
  websocket_url: string | null;
  /** Transfers the agent may ask for (a REFER on its leg); null or absent: none. */
  transfer_policy?: AgentTransferPolicy | null;
}

/** docs/API.md "Transfers asked by the agent": allowed target patterns and a per-call cap. */
export interface AgentTransferPolicy {
  allow: string[];
  max_per_call: number;
}

export interface AgentRecord extends AgentSettings {
  transfer_policy: AgentTransferPolicy | null;
  id: AgentId;
  tenant_id: TenantId;
  provider: string;
  external_agent_id: string;
  api_key_set: boolean;
  api_key_last4: string | null;
  verified_at: string | null;
  created_at: string;
  updated_at: string;
}

/** What PUT does to the stored key: keep it, clear it, or replace it (verified by the caller). */
export type ApiKeyChange = { kind: 'keep' } | { kind: 'clear' } | { kind: 'set'; value: string; verifiedAt: string | null };

type Row = Omit<AgentRecord, 'api_key_set' | 'transfer_policy'> & { api_key_set: number; transfer_policy: string | null };

const SETTINGS = 'name, connection_mode, region, sip_credential_id, sip_uri, sip_transport, sip_region, websocket_url, transfer_policy';
const COLUMNS = `id, tenant_id, provider, external_agent_id, ${SETTINGS}, CASE WHEN api_key_sealed IS NULL THEN 0 ELSE 1 END AS api_key_set, api_key_last4, verified_at, created_at, updated_at`;
const context = (id: string): string => `agents/${id}/api_key`;
const toRecord = (row: Row): AgentRecord => ({
  ...row, api_key_set: row.api_key_set === 1, transfer_policy: row.transfer_policy === null ? null : JSON.parse(row.transfer_policy) as AgentTransferPolicy,
});
/** The settings as bound to a statement: the policy as JSON text. */
const bound = (settings: AgentSettings) => ({ ...settings, transfer_policy: settings.transfer_policy ? JSON.stringify(settings.transfer_policy) : null });

export class AgentRepository {
  readonly #db: SqlExecutor;
  readonly #secrets: SecretBox;
  readonly #clock: Clock;

  constructor(db: SqlExecutor, clock: Clock, secrets: SecretBox) {
    this.#db = db;
    this.#secrets = secrets;
    this.#clock = clock;
  }

  /** Inserts an agent; run it inside a transaction when a route is created with it. */
  async insert(tenantId: TenantId, input: { provider: string; external_agent_id: string; settings: AgentSettings; apiKey: string | null; verifiedAt: string | null }): Promise<AgentRecord> {
    const id = newAgentId();
    await this.#db.run(
      `INSERT INTO agents (id, tenant_id, provider, external_agent_id, ${SETTINGS}, api_key_sealed, api_key_last4, verified_at, created_at, updated_at)
       VALUES (@id, @tenant_id, @provider, @external_agent_id, @name, @connection_mode, @region, @sip_credential_id, @sip_uri, @sip_transport,
               @sip_region, @websocket_url, @transfer_policy, @api_key_sealed, @api_key_last4, @verified_at, @created_at, @created_at)`,
      {
        id, tenant_id: tenantId, provider: input.provider, external_agent_id: input.external_agent_id, ...bound(input.settings),
        api_key_sealed: input.apiKey === null ? null : this.#secrets.seal(input.apiKey, context(id)),
        api_key_last4: input.apiKey === null ? null : input.apiKey.slice(-4), verified_at: input.verifiedAt, created_at: isoNow(this.#clock),
      },
    );
    return (await this.get(tenantId, id))!;
  }

  async get(tenantId: TenantId, id: string): Promise<AgentRecord | undefined> {
    const row = await this.#db.get<Row>(`SELECT ${COLUMNS} FROM agents WHERE tenant_id = ? AND id = ?`, [tenantId, id]);
    return row && toRecord(row);
  }

  async findByExternalId(tenantId: TenantId, provider: string, externalAgentId: string): Promise<AgentRecord | undefined> {
    const row = await this.#db.get<Row>(`SELECT ${COLUMNS} FROM agents WHERE tenant_id = ? AND provider = ? AND external_agent_id = ?`, [tenantId, provider, externalAgentId]);
    return row && toRecord(row);
  }

  async list(tenantId: TenantId, page: PageRequest): Promise<Page<AgentRecord>> {
    const rows = await this.#db.all<Row>(
      `SELECT ${COLUMNS} FROM agents WHERE tenant_id = @tenant_id AND ${KEYSET_SQL} ORDER BY created_at DESC, id DESC LIMIT @limit`,
      { tenant_id: tenantId, ...keysetParams(page.after), limit: page.limit + 1 },
    );
    const { items, next } = toPage(rows, page.limit);
    return { items: items.map(toRecord), next };
  }

  async update(tenantId: TenantId, id: AgentId, settings: AgentSettings, key: ApiKeyChange): Promise<AgentRecord | undefined> {
    const sealed = key.kind === 'set' ? this.#secrets.seal(key.value, context(id)) : null;
    const { changes } = await this.#db.run(
      `UPDATE agents SET name = @name, connection_mode = @connection_mode, region = @region, sip_credential_id = @sip_credential_id,
              sip_uri = @sip_uri, sip_transport = @sip_transport, sip_region = @sip_region, websocket_url = @websocket_url,
              transfer_policy = @transfer_policy,
              api_key_sealed = CASE @key_kind WHEN 'keep' THEN api_key_sealed ELSE @api_key_sealed END,
              api_key_last4 = CASE @key_kind WHEN 'keep' THEN api_key_last4 ELSE @api_key_last4 END,
              verified_at = CASE @key_kind WHEN 'keep' THEN verified_at ELSE @verified_at END,
              updated_at = @updated_at
        WHERE tenant_id = @tenant_id AND id = @id`,
      {
        tenant_id: tenantId, id, ...bound(settings), key_kind: key.kind, api_key_sealed: sealed,
        api_key_last4: key.kind === 'set' ? key.value.slice(-4) : null, verified_at: key.kind === 'set' ? key.verifiedAt : null,
        updated_at: isoNow(this.#clock),
      },
    );
    return changes === 1 ? this.get(tenantId, id) : undefined;
  }

  /** The clear provider key, for call-time use only (signed URLs, call registration). */
  async apiKey(tenantId: TenantId, id: AgentId): Promise<string | null> {
    const sealed = (await this.#db.get<{ api_key_sealed: string | null }>('SELECT api_key_sealed FROM agents WHERE tenant_id = ? AND id = ?', [tenantId, id]))?.api_key_sealed;
    return sealed ? this.#secrets.open(sealed, context(id)) : null;
  }
}
