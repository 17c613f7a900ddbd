/** @module Stored SIP digest credentials of a tenant; the password is sealed, never returned. */
import type { Clock } from '../common/clock.js';
import { newSipCredentialId, type SipCredentialId, type TenantId } from '../common/ids.js';
import type { SecretBox } from '../common/secret-box.js';
import { isoNow } from '../common/time.js';
import type { Db } from './database.js';
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
  readonly #secrets: SecretBox;
  readonly #clock: Clock;
  readonly #insert;
  readonly #get;
  readonly #password;
  readonly #list;
  readonly #delete;
  readonly #inUse;

  constructor(db: Db, clock: Clock, secrets: SecretBox) {
    this.#secrets = secrets;
    this.#clock = clock;
    this.#insert = db.prepare(`INSERT INTO sip_credentials (${COLUMNS}, password_sealed) VALUES (@id, @tenant_id, @username, @realm, @created_at, @password_sealed)`);
    this.#get = db.prepare<[string, string], SipCredentialRecord>(`SELECT ${COLUMNS} FROM sip_credentials WHERE tenant_id = ? AND id = ?`);
    this.#password = db.prepare<[string, string], { password_sealed: string }>('SELECT password_sealed FROM sip_credentials WHERE tenant_id = ? AND id = ?');
    this.#list = db.prepare<[Record<string, unknown>], SipCredentialRecord>(
      `SELECT ${COLUMNS} FROM sip_credentials WHERE tenant_id = @tenant_id AND ${KEYSET_SQL} ORDER BY created_at DESC, id DESC LIMIT @limit`,
    );
    this.#delete = db.prepare<[string, string]>('DELETE FROM sip_credentials WHERE tenant_id = ? AND id = ?');
    this.#inUse = db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM agents WHERE sip_credential_id = ?');
  }

  create(tenantId: TenantId, input: { username: string; password: string; realm: string | null }): SipCredentialRecord {
    const record: SipCredentialRecord = { id: newSipCredentialId(), tenant_id: tenantId, username: input.username, realm: input.realm, created_at: isoNow(this.#clock) };
    this.#insert.run({ ...record, password_sealed: this.#secrets.seal(input.password, context(record.id)) });
    return record;
  }

  get(tenantId: TenantId, id: string): SipCredentialRecord | undefined {
    return this.#get.get(tenantId, id);
  }

  /** The clear password, for the SIP stack at call time only. */
  password(tenantId: TenantId, id: SipCredentialId): string | undefined {
    const row = this.#password.get(tenantId, id);
    return row ? this.#secrets.open(row.password_sealed, context(id)) : undefined;
  }

  list(tenantId: TenantId, page: PageRequest): Page<SipCredentialRecord> {
    return toPage(this.#list.all({ tenant_id: tenantId, ...keysetParams(page.after), limit: page.limit + 1 }), page.limit);
  }

  /** Deletes unless an agent refers to it. */
  delete(tenantId: TenantId, id: string): 'deleted' | 'not_found' | 'in_use' {
    if (!this.get(tenantId, id)) return 'not_found';
    if ((this.#inUse.get(id)?.n ?? 0) > 0) return 'in_use';
    this.#delete.run(tenantId, id);
    return 'deleted';
  }
}
