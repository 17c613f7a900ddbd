/**
 * @module Post-call webhook deliveries: the duplicate key, the raw payload kept for audit, and the
 * reads attribution needs (routed DIDs with their calls, and conversation ids already seen).
 */
import type { Clock } from '../common/clock.js';
import type { TenantId } from '../common/ids.js';
import { isoNow } from '../common/time.js';
import type { Db } from './database.js';

/** An accepted delivery, as stored. */
export interface WebhookDelivery {
  delivery_key: string;
  provider: string;
  event: string;
  conversation_id: string | null;
  agent_id: string | null;
  tenant_id: TenantId;
  call_id: string;
  body_sha256: string;
  payload_json: string;
  received_at: string;
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

export class WebhookRepository {
  readonly #clock: Clock;
  readonly #insert;
  readonly #exists;
  readonly #byConversation;
  readonly #routedCalls;
  readonly #bridgeCalls;
  readonly #setConversation;

  constructor(db: Db, clock: Clock) {
    this.#clock = clock;
    this.#insert = db.prepare(
      `INSERT OR IGNORE INTO webhook_deliveries (delivery_key, provider, event, conversation_id, agent_id, tenant_id, call_id, body_sha256, payload_json, received_at)
       VALUES (@delivery_key, @provider, @event, @conversation_id, @agent_id, @tenant_id, @call_id, @body_sha256, @payload_json, @received_at)`,
    );
    this.#exists = db.prepare<[string], { one: number }>('SELECT 1 AS one FROM webhook_deliveries WHERE delivery_key = ?');
    this.#byConversation = db.prepare<[string, string], { tenant_id: TenantId; call_id: string; agent_id: string | null; ended_at: string | null; conversation_id: string | null }>(
      `SELECT d.tenant_id, d.call_id, d.agent_id, c.ended_at, c.conversation_id FROM webhook_deliveries d JOIN calls c ON c.id = d.call_id AND c.tenant_id = d.tenant_id
        WHERE d.provider = ? AND d.conversation_id = ? ORDER BY d.received_at LIMIT 1`,
    );
    // A route serves the call when it existed at the call's start and was not deleted before it:
    // routes are soft-deleted so a route deleted after the call still attributes.
    this.#routedCalls = db.prepare<[Record<string, unknown>], AttributionCandidate>(
      `SELECT DISTINCT c.tenant_id, c.id AS call_id, c.ended_at, c.conversation_id
         FROM routes r
         JOIN agents a ON a.id = r.agent_id AND a.tenant_id = r.tenant_id
         JOIN calls c ON c.tenant_id = r.tenant_id
        WHERE r.did_number = @agent_number
          AND a.provider = @provider
          AND (@external_agent_id IS NULL OR a.external_agent_id = @external_agent_id)
          AND c.state = 'ended' AND c.ended_at >= @ended_from AND c.ended_at <= @ended_to
          AND ((c.direction = 'inbound' AND c.to_number = @agent_number AND c.from_number = @remote_number)
            OR (c.direction = 'outbound' AND c.from_number = @agent_number AND c.to_number = @remote_number))
          AND (@direction IS NULL OR c.direction = @direction)
          AND r.created_at <= c.created_at AND (r.deleted_at IS NULL OR r.deleted_at >= c.created_at)
        ORDER BY c.ended_at DESC LIMIT ${MAX_CANDIDATES}`,
    );
    this.#bridgeCalls = db.prepare<[string, string, string, string], AttributionCandidate & { provider: string; external_agent_id: string }>(
      `SELECT c.tenant_id, c.id AS call_id, c.ended_at, c.conversation_id, a.provider, a.external_agent_id
         FROM calls c JOIN agents a ON a.id = c.agent_id AND a.tenant_id = c.tenant_id
        WHERE c.conversation_id = ? AND c.state = 'ended' AND c.ended_at >= ? AND c.ended_at <= ? AND a.provider = ?
        ORDER BY c.ended_at DESC LIMIT ${MAX_CANDIDATES}`,
    );
    this.#setConversation = db.prepare<[string, string, string]>(
      'UPDATE calls SET conversation_id = ? WHERE tenant_id = ? AND id = ? AND conversation_id IS NULL',
    );
  }

  /** Whether a delivery with this key was accepted before. */
  isDelivered(deliveryKey: string): boolean {
    return this.#exists.get(deliveryKey) !== undefined;
  }

  /** Stores an accepted delivery; false when the key was already there (a duplicate). */
  record(delivery: Omit<WebhookDelivery, 'received_at'>): boolean {
    return this.#insert.run({ ...delivery, received_at: isoNow(this.#clock) }).changes === 1;
  }

  /** The call an earlier delivery of this conversation was attributed to. */
  attributedConversation(provider: string, conversationId: string) {
    return this.#byConversation.get(provider, conversationId);
  }

  /** Ended calls on a DID routed to an agent of the provider, with the remote party, in the window. */
  routedCalls(q: RoutedCallQuery): AttributionCandidate[] {
    return this.#routedCalls.all({
      provider: q.provider, agent_number: q.agentNumber, remote_number: q.remoteNumber, external_agent_id: q.externalAgentId,
      direction: q.direction, ended_from: q.endedFrom, ended_to: q.endedTo,
    });
  }

  /** Ended calls of an imported agent of the provider that saw this conversation id (media_bridge), in the window. */
  callsWithConversation(provider: string, conversationId: string, endedFrom: string, endedTo: string) {
    return this.#bridgeCalls.all(conversationId, endedFrom, endedTo, provider);
  }

  /** Records the provider's conversation id on a call that has none yet. */
  setConversationId(tenantId: TenantId, callId: string, conversationId: string): void {
    this.#setConversation.run(conversationId, tenantId, callId);
  }
}
