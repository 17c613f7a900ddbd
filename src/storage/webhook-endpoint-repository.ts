/**
 * @module Tenants' webhook endpoints (docs/EVENTS.md "Endpoints"). The signing secret is sealed at
 * rest like agents' provider keys and leaves this module in clear only through
 * {@link WebhookEndpointRepository.create}, {@link WebhookEndpointRepository.rotateSecret} (the
 * answers that show it once) and {@link WebhookEndpointRepository.secrets} (the sender, at each attempt).
 */
import type { Clock } from '../common/clock.js';
import { newWebhookEndpointId, type TenantId } from '../common/ids.js';
import type { SecretBox } from '../common/secret-box.js';
import { isoNow, isoTime } from '../common/time.js';
import type { SqlExecutor } from './sql/sql-database.js';
import { KEYSET_SQL, keysetParams, toPage, type Page, type PageRequest } from './page.js';

export interface WebhookEndpointRecord {
  id: string;
  tenant_id: TenantId;
  url: string;
  /** Event types, or `["*"]`. */
  events: string[];
  description: string | null;
  disabled: boolean;
  consecutive_failures: number;
  failed_deliveries: number;
  /** When repeated failures flagged the endpoint (docs/EVENTS.md "Retries"); null once one succeeds. */
  flagged_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface WebhookEndpointChange {
  url?: string;
  events?: string[];
  description?: string | null;
  disabled?: boolean;
}

/** How long the previous secret keeps signing after a rotation (docs/EVENTS.md "Verifying a delivery"). */
export const PREVIOUS_SECRET_VALIDITY_MS = 24 * 3_600_000;

type Row = Omit<WebhookEndpointRecord, 'events' | 'disabled'> & { events: string; disabled: number };
const COLUMNS = 'id, tenant_id, url, events, description, disabled, consecutive_failures, failed_deliveries, flagged_at, created_at, updated_at';
const toRecord = (row: Row): WebhookEndpointRecord => ({
  ...row, events: JSON.parse(row.events) as string[], disabled: row.disabled === 1,
  consecutive_failures: Number(row.consecutive_failures), failed_deliveries: Number(row.failed_deliveries),
});
/** The AEAD context binds a sealed secret to its endpoint row: copied into another row, it does not open. */
const context = (id: string, which: 'secret' | 'previous'): string => `webhook_endpoints/${id}/${which}`;

export class WebhookEndpointRepository {
  readonly #db: SqlExecutor;
  readonly #clock: Clock;
  readonly #secrets: SecretBox;

  constructor(db: SqlExecutor, clock: Clock, secrets: SecretBox) {
    this.#db = db;
    this.#clock = clock;
    this.#secrets = secrets;
  }

  async create(tenantId: TenantId, input: { url: string; events: string[]; description: string | null; secret: string }): Promise<WebhookEndpointRecord> {
    const id = newWebhookEndpointId();
    const now = isoNow(this.#clock);
    await this.#db.run(
      `INSERT INTO webhook_endpoints (id, tenant_id, url, events, description, disabled, secret_sealed, created_at, updated_at)
       VALUES (@id, @tenant_id, @url, @events, @description, 0, @secret_sealed, @now, @now)`,
      { id, tenant_id: tenantId, url: input.url, events: JSON.stringify(input.events), description: input.description, secret_sealed: this.#secrets.seal(input.secret, context(id, 'secret')), now },
    );
    return (await this.get(tenantId, id))!;
  }

  async get(tenantId: TenantId, id: string): Promise<WebhookEndpointRecord | undefined> {
    const row = await this.#db.get<Row>(`SELECT ${COLUMNS} FROM webhook_endpoints WHERE tenant_id = ? AND id = ?`, [tenantId, id]);
    return row && toRecord(row);
  }

  async list(tenantId: TenantId, page: PageRequest): Promise<Page<WebhookEndpointRecord>> {
    const rows = await this.#db.all<Row>(
      `SELECT ${COLUMNS} FROM webhook_endpoints WHERE tenant_id = @tenant_id AND ${KEYSET_SQL} ORDER BY created_at DESC, id DESC LIMIT @limit`,
      { tenant_id: tenantId, ...keysetParams(page.after), limit: page.limit + 1 },
    );
    const { items, next } = toPage(rows, page.limit);
    return { items: items.map(toRecord), next };
  }

  /** The tenant's enabled endpoints: those an event is fanned out to (in the event's transaction). */
  async enabled(tenantId: TenantId): Promise<WebhookEndpointRecord[]> {
    return (await this.#db.all<Row>(`SELECT ${COLUMNS} FROM webhook_endpoints WHERE tenant_id = ? AND disabled = 0 ORDER BY created_at, id`, [tenantId])).map(toRecord);
  }

  async update(tenantId: TenantId, id: string, change: WebhookEndpointChange): Promise<WebhookEndpointRecord | undefined> {
    const current = await this.get(tenantId, id);
    if (!current) return undefined;
    const next = { ...current, ...change };
    await this.#db.run(
      `UPDATE webhook_endpoints SET url = @url, events = @events, description = @description, disabled = @disabled, updated_at = @updated_at
        WHERE tenant_id = @tenant_id AND id = @id`,
      { tenant_id: tenantId, id, url: next.url, events: JSON.stringify(next.events), description: next.description, disabled: next.disabled ? 1 : 0, updated_at: isoNow(this.#clock) },
    );
    return this.get(tenantId, id);
  }

  /** Deletes the endpoint and, by cascade, its deliveries and their attempts. */
  async delete(tenantId: TenantId, id: string): Promise<boolean> {
    return (await this.#db.run('DELETE FROM webhook_endpoints WHERE tenant_id = ? AND id = ?', [tenantId, id])).changes === 1;
  }

  /** Replaces the secret; the current one keeps signing for {@link PREVIOUS_SECRET_VALIDITY_MS}. */
  async rotateSecret(tenantId: TenantId, id: string, secret: string): Promise<WebhookEndpointRecord | undefined> {
    return this.#db.transaction(async (tx) => {
      const row = await tx.get<{ secret_sealed: string }>('SELECT secret_sealed FROM webhook_endpoints WHERE tenant_id = ? AND id = ?', [tenantId, id]);
      if (!row) return undefined;
      const previous = this.#secrets.open(row.secret_sealed, context(id, 'secret'));
      await tx.run(
        `UPDATE webhook_endpoints SET secret_sealed = @secret_sealed, previous_secret_sealed = @previous_sealed, previous_secret_expires_at = @expires,
                updated_at = @now WHERE tenant_id = @tenant_id AND id = @id`,
        {
          tenant_id: tenantId, id, secret_sealed: this.#secrets.seal(secret, context(id, 'secret')),
          previous_sealed: this.#secrets.seal(previous, context(id, 'previous')), expires: isoTime(this.#clock.now() + PREVIOUS_SECRET_VALIDITY_MS), now: isoNow(this.#clock),
        },
      );
      return (await new WebhookEndpointRepository(tx, this.#clock, this.#secrets).get(tenantId, id))!;
    });
  }

  /** The secrets in force, newest first: the previous one only until it expires. Undefined without the endpoint. */
  async secrets(tenantId: TenantId, id: string): Promise<string[] | undefined> {
    const row = await this.#db.get<{ secret_sealed: string; previous_secret_sealed: string | null; previous_secret_expires_at: string | null }>(
      'SELECT secret_sealed, previous_secret_sealed, previous_secret_expires_at FROM webhook_endpoints WHERE tenant_id = ? AND id = ?', [tenantId, id],
    );
    if (!row) return undefined;
    const secrets = [this.#secrets.open(row.secret_sealed, context(id, 'secret'))];
    if (row.previous_secret_sealed && row.previous_secret_expires_at && row.previous_secret_expires_at > isoNow(this.#clock)) {
      secrets.push(this.#secrets.open(row.previous_secret_sealed, context(id, 'previous')));
    }
    return secrets;
  }

  /**
   * Counts a delivery's outcome: a success clears the run of failures and the flag; a delivery
   * failed for good adds to both, and the endpoint is flagged once `flagAfter` fail in a row.
   */
  async recordOutcome(id: string, outcome: 'delivered' | 'failed', flagAfter: number): Promise<void> {
    const now = isoNow(this.#clock);
    if (outcome === 'delivered') {
      await this.#db.run('UPDATE webhook_endpoints SET consecutive_failures = 0, flagged_at = NULL WHERE id = ? AND (consecutive_failures > 0 OR flagged_at IS NOT NULL)', [id]);
      return;
    }
    await this.#db.run(
      `UPDATE webhook_endpoints SET consecutive_failures = consecutive_failures + 1, failed_deliveries = failed_deliveries + 1,
              flagged_at = CASE WHEN flagged_at IS NULL AND consecutive_failures + 1 >= @flag_after THEN @now ELSE flagged_at END WHERE id = @id`,
      { id, now, flag_after: flagAfter },
    );
  }
}
