/** @module Stored SIP digest credentials of a tenant; the password is sealed, never returned. */
import type { Clock } from '../common/clock.js';
import { newSipCredentialId, type SipCredentialId, type TenantId } from '../common/ids.js';
import type { SecretBox } from '../common/secret-box.js';
import { isoNow } from '../common/time.js';
import type { SqlExecutor } from './sql/sql-database.js';
import { KEYSET_SQL, keysetParams, toPage, type Page, type PageRequest } from './page.js';

export interface SipCredentialRecord {
  id: SipCredentialId;
  tenant_id: TenantId;
  username: string;
  realm: string | null;
  created_at: string;
}

const COLUMNS = 'id, tenant_id, username, realm, created_at';
/** Associated data binding a sealed password to its row. */
const context = (id: string): string => `sip_credentials/${id}/password`;

export class SipCredentialRepository {
  readonly #db: SqlExecutor;
  readonly #secrets: SecretBox;
  readonly #clock: Clock;

  constructor(db: SqlExecutor, clock: Clock, secrets: SecretBox) {
    this.#db = db;
    this.#secrets = secrets;
    this.#clock = clock;
  }

  async create(tenantId: TenantId, input: { username: string; password: string; realm: string | null }): Promise<SipCredentialRecord> {
    const record: SipCredentialRecord = { id: newSipCredentialId(), tenant_id: tenantId, username: input.username, realm: input.realm, created_at: isoNow(this.#clock) };
    await this.#db.run(
      `INSERT INTO sip_credentials (${COLUMNS}, password_sealed) VALUES (@id, @tenant_id, @username, @realm, @created_at, @password_sealed)`,
      { ...record, password_sealed: this.#secrets.seal(input.password, context(record.id)) },
    );
    return record;
  }

  get(tenantId: TenantId, id: string): Promise<SipCredentialRecord | undefined> {
    return this.#db.get<SipCredentialRecord>(`SELECT ${COLUMNS} FROM sip_credentials WHERE tenant_id = ? AND id = ?`, [tenantId, id]);
  }

  /** The clear password, for the SIP stack at call time only. */
  async password(tenantId: TenantId, id: SipCredentialId): Promise<string | undefined> {
    const row = await this.#db.get<{ password_sealed: string }>('SELECT password_sealed FROM sip_credentials WHERE tenant_id = ? AND id = ?', [tenantId, id]);
    return row ? this.#secrets.open(row.password_sealed, context(id)) : undefined;
  }

  async list(tenantId: TenantId, page: PageRequest): Promise<Page<SipCredentialRecord>> {
    const rows = await this.#db.all<SipCredentialRecord>(
      `SELECT ${COLUMNS} FROM sip_credentials WHERE tenant_id = @tenant_id AND ${KEYSET_SQL} ORDER BY created_at DESC, id DESC LIMIT @limit`,
      { tenant_id: tenantId, ...keysetParams(page.after), limit: page.limit + 1 },
    );
    return toPage(rows, page.limit);
  }

  /** Deletes unless an agent refers to it (one transaction, so an agent added meanwhile is seen or refused by the foreign key). */
  delete(tenantId: TenantId, id: string): Promise<'deleted' | 'not_found' | 'in_use'> {
    return this.#db.transaction(async (tx) => {
      if (!(await tx.get(`SELECT id FROM sip_credentials WHERE tenant_id = ? AND id = ?`, [tenantId, id]))) return 'not_found';
      if (Number((await tx.get<{ n: number | string }>('SELECT count(*) AS n FROM agents WHERE sip_credential_id = ?', [id]))?.n ?? 0) > 0) return 'in_use';
      await tx.run('DELETE FROM sip_credentials WHERE tenant_id = ? AND id = ?', [tenantId, id]);
      return 'deleted';
    });
  }
}
