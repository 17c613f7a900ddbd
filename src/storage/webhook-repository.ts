/**
 * @module Post-call webhook deliveries: the duplicate key (per tenant), the raw payload kept for
 * audit under its caps, what a call's first attribution stored, and the reads attribution needs
 * (routed DIDs with their calls, and conversation ids already seen).
 */
import type { Clock } from '../common/clock.js';
import type { TenantId } from '../common/ids.js';
import { isoNow } from '../common/time.js';
import type { SqlExecutor } from './sql/sql-database.js';

/**
 * A delivery as stored: `accepted` (applied to its call) or `conflict` (kept for audit, applied
 * to nothing; docs/WEBHOOKS.md "First attribution wins"). A conflict between tenants has no
 * tenant and no call.
 */
export interface WebhookDelivery {
  delivery_key: string;
  status: 'accepted' | 'conflict';
  conflict_reason: string | null;
  provider: string;
  event: string;
  conversation_id: string | null;
  agent_id: string | null;
  tenant_id: TenantId | null;
  call_id: string | null;
  body_sha256: string;
  /** Size of the body as received. */
  body_bytes: number;
  /** The audit copy, or null when a raw-body cap left it out (`payload_omitted` says which). */
  payload_json: string | null;
  payload_omitted: 'per_call_cap' | 'total_cap' | null;
  /** `inline:<sha256 of the audio>` or `url:<sha256 of the URL without its query>`. */
  recording_ref: string | null;
  received_at: string;
}

/** What earlier applied deliveries stored for one call (first attribution wins). */
export interface CallDeliveries {
  /** Conversation ids of the call's applied deliveries, oldest first. */
  conversationIds: string[];
  /** The recording the first delivery with one brought. */
  recordingRef: string | null;
}

/** A call bound to a conversation id, by an applied delivery or by the gateway itself (media_bridge). */
export interface ConversationBinding {
  tenant_id: TenantId;
  call_id: string;
  /** Null for a call not ended yet (never attributable). */
  ended_at: string | null;
  conversation_id: string | null;
  /** The agent id the binding was made with (null: the delivery named none). */
  agent_id: string | null;
}

/** A call that attribution may tie a payload to. */
export interface AttributionCandidate {
  tenant_id: TenantId;
  call_id: string;
  ended_at: string;
  conversation_id: string | null;
}

/** What a DID-based match needs: the agent-side DID, the other party, the provider and its agent id. */
export interface RoutedCallQuery {
  provider: string;
  agentNumber: string;
  remoteNumber: string;
  /** The payload's agent id; null matches any agent of the provider. */
  externalAgentId: string | null;
  /** Null matches either direction. */
  direction: 'inbound' | 'outbound' | null;
  /** RFC 3339 bounds of the call's end (the attribution window). */
  endedFrom: string;
  endedTo: string;
}

/** Candidates considered per payload; more than this many matching calls is not a real workload. */
const MAX_CANDIDATES = 50;

/**
 * Deliveries of one tenant's call, or kept under neither (nulls). Spelt `= ?` or `IS NULL` by
 * value rather than `IS NOT DISTINCT FROM ?`: PostgreSQL serves that from no index, so each check
 * would read every delivery ever kept; both engines find either spelling through webhook_deliveries_call.
 */
function ownerSql(tenantId: TenantId | null, callId: string | null): { sql: string; params: string[] } {
  const sql = `${tenantId === null ? 'tenant_id IS NULL' : 'tenant_id = ?'} AND ${callId === null ? 'call_id IS NULL' : 'call_id = ?'}`;
  return { sql, params: [tenantId, callId].filter((value): value is string => value !== null) };
}

export class WebhookRepository {
  readonly #db: SqlExecutor;
  readonly #clock: Clock;

  constructor(db: SqlExecutor, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  /** Whether an applied delivery of this tenant has this key. */
  async isDelivered(tenantId: TenantId, deliveryKey: string): Promise<boolean> {
    return (await this.#db.get("SELECT 1 AS one FROM webhook_deliveries WHERE tenant_id = ? AND delivery_key = ? AND status = 'accepted'", [tenantId, deliveryKey])) !== undefined;
  }

  /** Whether the same body under the same key was already kept as a conflict for this call (or for no call). */
  async isRepeatedConflict(tenantId: TenantId | null, callId: string | null, deliveryKey: string, bodySha256: string): Promise<boolean> {
    const owner = ownerSql(tenantId, callId);
    return (await this.#db.get(
      `SELECT 1 AS one FROM webhook_deliveries WHERE ${owner.sql} AND delivery_key = ? AND body_sha256 = ? AND status = 'conflict'`,
      [...owner.params, deliveryKey, bodySha256],
    )) !== undefined;
  }

  /** Stores a delivery; false when an applied one of the tenant had the key already (a duplicate). */
  async record(delivery: Omit<WebhookDelivery, 'received_at'>): Promise<boolean> {
    const kept = delivery.payload_json === null ? 0 : Buffer.byteLength(delivery.payload_json, 'utf8');
    return (await this.#db.run(
      `INSERT INTO webhook_deliveries (delivery_key, status, conflict_reason, provider, event, conversation_id, agent_id, tenant_id, call_id,
         body_sha256, body_bytes, payload_json, payload_omitted, kept_bytes, recording_ref, received_at)
       VALUES (@delivery_key, @status, @conflict_reason, @provider, @event, @conversation_id, @agent_id, @tenant_id, @call_id,
         @body_sha256, @body_bytes, @payload_json, @payload_omitted, @kept_bytes, @recording_ref, @received_at)
       ON CONFLICT DO NOTHING`,
      { ...delivery, kept_bytes: kept, received_at: isoNow(this.#clock) },
    )).changes === 1;
  }

  /** What the call's applied deliveries stored first. */
  async callDeliveries(tenantId: TenantId, callId: string): Promise<CallDeliveries> {
    const conversations = await this.#db.all<{ conversation_id: string }>(
      `SELECT conversation_id FROM webhook_deliveries WHERE tenant_id = ? AND call_id = ? AND status = 'accepted' AND conversation_id IS NOT NULL
        ORDER BY id`, [tenantId, callId],
    );
    const recording = await this.#db.get<{ recording_ref: string }>(
      `SELECT recording_ref FROM webhook_deliveries WHERE tenant_id = ? AND call_id = ? AND status = 'accepted' AND recording_ref IS NOT NULL
        ORDER BY id LIMIT 1`, [tenantId, callId],
    );
    return { conversationIds: conversations.map((r) => r.conversation_id), recordingRef: recording?.recording_ref ?? null };
  }

  /** Raw bytes kept for one call (both null: for conflicts between tenants), and for all deliveries. */
  async keptRawBytes(tenantId: TenantId | null, callId: string | null): Promise<{ call: number; total: number }> {
    const owner = ownerSql(tenantId, callId);
    const call = await this.#db.get<{ n: number | string }>(`SELECT coalesce(sum(kept_bytes), 0) AS n FROM webhook_deliveries WHERE ${owner.sql}`, owner.params);
    const total = await this.#db.get<{ bytes: number | string }>('SELECT bytes FROM webhook_raw_usage WHERE id = 1');
    return { call: Number(call?.n ?? 0), total: Number(total?.bytes ?? 0) };
  }

  /** Calls that applied deliveries of this provider and conversation id were attributed to, in any tenant. */
  attributedConversation(provider: string, conversationId: string): Promise<ConversationBinding[]> {
    return this.#db.all<ConversationBinding>(
      `SELECT DISTINCT d.tenant_id, d.call_id, d.agent_id, c.ended_at, c.conversation_id
         FROM webhook_deliveries d JOIN calls c ON c.id = d.call_id AND c.tenant_id = d.tenant_id
        WHERE d.provider = ? AND d.conversation_id = ? AND d.status = 'accepted' LIMIT ${MAX_CANDIDATES}`,
      [provider, conversationId],
    );
  }

  /**
   * Ended calls on a DID routed to an agent of the provider, with the remote party, in the window.
   * A route serves the call when it existed at the call's start and was not deleted before it:
   * routes are soft-deleted so a route deleted after the call still attributes.
   */
  routedCalls(q: RoutedCallQuery): Promise<AttributionCandidate[]> {
    return this.#db.all<AttributionCandidate>(
      `SELECT DISTINCT c.tenant_id, c.id AS call_id, c.ended_at, c.conversation_id
         FROM routes r
         JOIN agents a ON a.id = r.agent_id AND a.tenant_id = r.tenant_id
         JOIN calls c ON c.tenant_id = r.tenant_id
        WHERE r.did_number = @agent_number
          AND a.provider = @provider
          AND (CAST(@external_agent_id AS TEXT) IS NULL OR a.external_agent_id = @external_agent_id)
          AND c.state = 'ended' AND c.ended_at >= @ended_from AND c.ended_at <= @ended_to
          AND ((c.direction = 'inbound' AND c.to_number = @agent_number AND c.from_number = @remote_number)
            OR (c.direction = 'outbound' AND c.from_number = @agent_number AND c.to_number = @remote_number))
          AND (CAST(@direction AS TEXT) IS NULL OR c.direction = @direction)
          AND r.created_at <= c.created_at AND (r.deleted_at IS NULL OR r.deleted_at >= c.created_at)
        ORDER BY c.ended_at DESC LIMIT ${MAX_CANDIDATES}`,
      {
        provider: q.provider, agent_number: q.agentNumber, remote_number: q.remoteNumber, external_agent_id: q.externalAgentId,
        direction: q.direction, ended_from: q.endedFrom, ended_to: q.endedTo,
      },
    );
  }

  /** Ended calls of an imported agent of the provider that saw this conversation id (media_bridge), in the window. */
  callsWithConversation(provider: string, conversationId: string, endedFrom: string, endedTo: string): Promise<ConversationBinding[]> {
    return this.#db.all<ConversationBinding>(
      `SELECT c.tenant_id, c.id AS call_id, c.ended_at, c.conversation_id, a.external_agent_id AS agent_id
         FROM calls c JOIN agents a ON a.id = c.agent_id AND a.tenant_id = c.tenant_id
        WHERE c.conversation_id = ? AND c.state = 'ended' AND c.ended_at >= ? AND c.ended_at <= ? AND a.provider = ?
        ORDER BY c.ended_at DESC LIMIT ${MAX_CANDIDATES}`,
      [conversationId, endedFrom, endedTo, provider],
    );
  }

  /** Records the provider's conversation id on a call that has none yet. */
  async setConversationId(tenantId: TenantId, callId: string, conversationId: string): Promise<void> {
    await this.#db.run('UPDATE calls SET conversation_id = ? WHERE tenant_id = ? AND id = ? AND conversation_id IS NULL', [conversationId, tenantId, callId]);
  }
}
