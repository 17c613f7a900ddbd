/**
 * @module Cookie sessions (docs/API.md "Authentication"): opaque tokens stored hashed, with an idle and an
 * absolute expiry, revoked by logout or with the API key they were made from.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../common/clock.js';
import { randomBase62, type ApiKeyId, type TenantId } from '../common/ids.js';
import { isoTime } from '../common/time.js';
import { hashSecret, type ApiKeyKind } from './api-key-repository.js';
import type { SqlExecutor } from './sql/sql-database.js';

export interface SessionPolicy {
  idleMs: number;
  absoluteMs: number;
}

/** What a valid session authenticates as. */
export interface SessionPrincipal {
  sessionId: string;
  tenantId: TenantId;
  apiKeyId: ApiKeyId;
  keyKind: ApiKeyKind;
}

interface SessionRow {
  id: string;
  tenant_id: TenantId;
  api_key_id: ApiKeyId;
  kind: ApiKeyKind;
  last_seen_at: string;
  expires_at: string;
}

/** Last-seen is written at most this often, so reads do not each cost a write. */
const TOUCH_INTERVAL_MS = 60_000;

export class SessionRepository {
  readonly #db: SqlExecutor;
  readonly #clock: Clock;
  readonly #policy: SessionPolicy;

  constructor(db: SqlExecutor, clock: Clock, policy: SessionPolicy) {
    this.#db = db;
    this.#clock = clock;
    this.#policy = policy;
  }

  /** Starts a session; returns the cookie value, which exists in clear only in the response. */
  async create(tenantId: TenantId, apiKeyId: ApiKeyId): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    const now = this.#clock.now();
    await this.#db.run(
      `INSERT INTO sessions (id, token_hash, tenant_id, api_key_id, created_at, last_seen_at, expires_at)
       VALUES (@id, @token_hash, @tenant_id, @api_key_id, @created_at, @created_at, @expires_at)`,
      {
        id: `ses_${randomBase62(20)}`, token_hash: hashSecret(token), tenant_id: tenantId, api_key_id: apiKeyId,
        created_at: isoTime(now), expires_at: isoTime(now + this.#policy.absoluteMs),
      },
    );
    return token;
  }

  /** The principal of a live session, refreshing its idle timer; undefined when unknown or expired. */
  async authenticate(token: string): Promise<SessionPrincipal | undefined> {
    if (token.length < 20 || token.length > 100) return undefined;
    // A session is only as good as its key: a revoked key's sessions fail here too.
    const row = await this.#db.get<SessionRow>(
      `SELECT s.id, s.tenant_id, s.api_key_id, k.kind, s.last_seen_at, s.expires_at
         FROM sessions s JOIN api_keys k ON k.id = s.api_key_id
        WHERE s.token_hash = ? AND s.revoked_at IS NULL AND k.revoked_at IS NULL`,
      [hashSecret(token)],
    );
    if (!row) return undefined;
    const now = this.#clock.now();
    const lastSeen = Date.parse(row.last_seen_at);
    if (now >= Date.parse(row.expires_at) || now - lastSeen >= this.#policy.idleMs) return undefined;
    if (now - lastSeen >= TOUCH_INTERVAL_MS) await this.#db.run('UPDATE sessions SET last_seen_at = ? WHERE id = ?', [isoTime(now), row.id]);
    return { sessionId: row.id, tenantId: row.tenant_id, apiKeyId: row.api_key_id, keyKind: row.kind };
  }

  async revoke(token: string): Promise<boolean> {
    return (await this.#db.run('UPDATE sessions SET revoked_at = ? WHERE token_hash = ? AND revoked_at IS NULL', [isoTime(this.#clock.now()), hashSecret(token)])).changes === 1;
  }
}
