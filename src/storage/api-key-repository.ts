/**
 * @module Tenant API keys (docs/API.md "Authentication"): `vgw_live_…` and sandbox `vgw_test_…`, stored only
 * as SHA-256 hashes. A key has 40 base62 characters (about 238 bits), so a fast hash is safe: there
 * is nothing to brute-force.
 */
import { createHash } from 'node:crypto';
import type { Clock } from '../common/clock.js';
import { newApiKeyId, randomBase62, type ApiKeyId, type TenantId } from '../common/ids.js';
import { isoNow } from '../common/time.js';
import type { SqlExecutor } from './sql/sql-database.js';

export type ApiKeyKind = 'live' | 'sandbox';

export interface ApiKeyRecord {
  id: ApiKeyId;
  tenant_id: TenantId;
  kind: ApiKeyKind;
  last4: string;
  created_at: string;
  revoked_at: string | null;
}

const KEY_PATTERN = /^vgw_(live|test)_[0-9A-Za-z]{32,64}$/;
const PREFIX: Record<ApiKeyKind, string> = { live: 'vgw_live_', sandbox: 'vgw_test_' };

export const hashSecret = (value: string): string => createHash('sha256').update(value, 'utf8').digest('hex');

/** True when `value` has the shape of one of our keys (checked before any lookup). */
export const looksLikeApiKey = (value: string): boolean => KEY_PATTERN.test(value);

export class ApiKeyRepository {
  readonly #clock: Clock;
  readonly #db: SqlExecutor;

  constructor(db: SqlExecutor, clock: Clock) {
    this.#clock = clock;
    this.#db = db;
  }

  /** Creates a key for the tenant; the returned `apiKey` is the only time it exists in clear. */
  async create(tenantId: TenantId, kind: ApiKeyKind): Promise<{ apiKey: string; record: ApiKeyRecord }> {
    const apiKey = PREFIX[kind] + randomBase62(40);
    const record: ApiKeyRecord = {
      id: newApiKeyId(), tenant_id: tenantId, kind, last4: apiKey.slice(-4), created_at: isoNow(this.#clock), revoked_at: null,
    };
    await this.#db.run(
      'INSERT INTO api_keys (id, tenant_id, kind, key_hash, last4, created_at) VALUES (@id, @tenant_id, @kind, @key_hash, @last4, @created_at)',
      { id: record.id, tenant_id: tenantId, kind, key_hash: hashSecret(apiKey), last4: record.last4, created_at: record.created_at },
    );
    return { apiKey, record };
  }

  /** The key's record when it exists and is not revoked. */
  async findActive(apiKey: string): Promise<ApiKeyRecord | undefined> {
    if (!looksLikeApiKey(apiKey)) return undefined;
    const record = await this.#db.get<ApiKeyRecord>('SELECT id, tenant_id, kind, last4, created_at, revoked_at FROM api_keys WHERE key_hash = ?', [hashSecret(apiKey)]);
    return record && record.revoked_at === null ? record : undefined;
  }

  /** Revokes the key and every session made from it. False when no active key matched. */
  async revoke(apiKey: string): Promise<boolean> {
    if (!looksLikeApiKey(apiKey)) return false;
    const now = isoNow(this.#clock);
    const hash = hashSecret(apiKey);
    return this.#db.transaction(async (tx) => {
      await tx.run('UPDATE sessions SET revoked_at = ? WHERE revoked_at IS NULL AND api_key_id = (SELECT id FROM api_keys WHERE key_hash = ?)', [now, hash]);
      return (await tx.run('UPDATE api_keys SET revoked_at = ? WHERE key_hash = ? AND revoked_at IS NULL', [now, hash])).changes === 1;
    });
  }
}
