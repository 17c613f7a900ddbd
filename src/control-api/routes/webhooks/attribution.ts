/**
 * @module Strict attribution of a post-call payload to one tenant's call (contract section 7):
 * a conversation id the gateway already knows, or a DID routed to the provider's agent plus a
 * recently ended call with the payload's other party. Anything else attributes to nothing.
 */
import { isoTime } from '../../../common/time.js';
import type { TenantId } from '../../../common/ids.js';
import type { AttributionCandidate, WebhookRepository } from '../../../storage/index.js';
import type { PostCallEvent } from './webhook-ports.js';

export interface Attribution {
  tenantId: TenantId;
  callId: string;
  /** The call's conversation id before this payload (null: set it from the payload). */
  knownConversationId: string | null;
  via: 'conversation' | 'routed_did';
}

export interface AttributionInput {
  payload: PostCallEvent;
  nowMs: number;
  windowMs: number;
}

/**
 * When several calls match, the one whose end is closest to the payload's end time wins; without
 * an end time in the payload, the most recently ended one. Candidates arrive newest first.
 */
export function closestCall(candidates: readonly AttributionCandidate[], endedAt: number | null): AttributionCandidate | undefined {
  if (endedAt === null) return candidates[0];
  let best: AttributionCandidate | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const distance = Math.abs(Date.parse(c.ended_at) - endedAt);
    if (distance < bestDistance) {
      best = c;
      bestDistance = distance;
    }
  }
  return best;
}

/** A conversation attributed by an earlier delivery, or seen by the gateway on a media_bridge call. */
function byConversation(repo: WebhookRepository, input: AttributionInput, endedFrom: string, endedTo: string): Attribution | undefined {
  const { payload } = input;
  const earlier = repo.attributedConversation(payload.provider, payload.conversationId);
  if (earlier) {
    // The conversation's call must still be within the window, as for a first delivery.
    if (earlier.ended_at === null || earlier.ended_at < endedFrom) return undefined;
    // A later event of the same conversation must name the same agent when both name one.
    if (payload.agentId !== null && earlier.agent_id !== null && payload.agentId !== earlier.agent_id) return undefined;
    return { tenantId: earlier.tenant_id, callId: earlier.call_id, knownConversationId: earlier.conversation_id, via: 'conversation' };
  }
  const seen = repo.callsWithConversation(payload.provider, payload.conversationId, endedFrom, endedTo)
    .filter((c) => payload.agentId === null || c.external_agent_id === payload.agentId);
  // Two tenants' calls claiming one conversation id is not something to guess between.
  if (new Set(seen.map((c) => c.tenant_id)).size !== 1) return undefined;
  const call = closestCall(seen, payload.endedAt);
  return call && { tenantId: call.tenant_id, callId: call.call_id, knownConversationId: call.conversation_id, via: 'conversation' };
}

/** The DID rule: agent-side number routed (then or now) to the provider's agent, and a matching call. */
function byRoutedDid(repo: WebhookRepository, payload: PostCallEvent, endedFrom: string, endedTo: string): Attribution | undefined {
  if (payload.agentNumber === null || payload.remoteNumber === null) return undefined;
  const candidates = repo.routedCalls({
    provider: payload.provider, agentNumber: payload.agentNumber, remoteNumber: payload.remoteNumber,
    externalAgentId: payload.agentId, direction: payload.direction, endedFrom, endedTo,
  });
  if (new Set(candidates.map((c) => c.tenant_id)).size > 1) return undefined;
  const call = closestCall(candidates, payload.endedAt);
  return call && { tenantId: call.tenant_id, callId: call.call_id, knownConversationId: call.conversation_id, via: 'routed_did' };
}

/** The call a payload belongs to, or undefined (the payload is then ignored and nothing is stored). */
export function attribute(repo: WebhookRepository, input: AttributionInput): Attribution | undefined {
  const endedFrom = isoTime(input.nowMs - input.windowMs);
  const endedTo = isoTime(input.nowMs);
  return byConversation(repo, input, endedFrom, endedTo) ?? byRoutedDid(repo, input.payload, endedFrom, endedTo);
}
