/**
 * @module Strict attribution of a post-call payload to one tenant's call (docs/WEBHOOKS.md "Post-call webhooks"):
 * a DID routed to the provider's agent plus a recently ended call with the payload's other party,
 * or else a conversation id the gateway already knows in exactly one tenant. Anything else
 * attributes to nothing.
 */
import { isoTime } from '../common/time.js';
import type { TenantId } from '../common/ids.js';
import type { AttributionCandidate, ConversationBinding, WebhookRepository } from '../storage/index.js';
import type { PostCallEvent } from './post-call-ports.js';

export interface Attribution {
  tenantId: TenantId;
  callId: string;
  /** The call's conversation id before this payload (null: set it from the payload). */
  knownConversationId: string | null;
  via: 'conversation' | 'routed_did';
}

/** The conversation id is bound to calls of several tenants (or several calls): attributed to none. */
export interface Contested {
  contested: true;
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

/**
 * The conversation-id rule, for payloads the DID rule cannot place (ElevenLabs `post_call_audio`
 * carries no numbers): calls that applied deliveries of this conversation were attributed to, or
 * that the gateway saw it on (media_bridge), in any tenant. A binding leads only to its own
 * tenant's call: when calls of several tenants hold the id (after the agent check), the payload
 * is contested and attributes to none (docs/WEBHOOKS.md "Attribution across tenants").
 */
async function byConversation(repo: WebhookRepository, payload: PostCallEvent, endedFrom: string, endedTo: string): Promise<Attribution | Contested | undefined> {
  // A later event of the same conversation must name the same agent when both name one.
  const sameAgent = (b: ConversationBinding): boolean => payload.agentId === null || b.agent_id === null || b.agent_id === payload.agentId;
  const bindings = [
    ...(await repo.attributedConversation(payload.provider, payload.conversationId))
      .filter((b) => b.ended_at !== null && b.ended_at >= endedFrom && b.ended_at <= endedTo),
    ...(await repo.callsWithConversation(payload.provider, payload.conversationId, endedFrom, endedTo)),
  ].filter(sameAgent);
  const calls = new Map(bindings.map((b) => [`${b.tenant_id}/${b.call_id}`, b]));
  if (calls.size === 0) return undefined;
  // One conversation is one call: two calls holding it (in one tenant or several) is not guessed between.
  if (calls.size > 1) return { contested: true };
  const [call] = calls.values();
  return { tenantId: call!.tenant_id, callId: call!.call_id, knownConversationId: call!.conversation_id, via: 'conversation' };
}

/**
 * The DID rule: agent-side number routed (then or now) to the provider's agent, and a matching
 * call. The route is the tenant's own, so another tenant's claim on the conversation id does not
 * move the payload elsewhere. Among several matching calls, the one already bound to the payload's
 * conversation id wins; else the closest end.
 */
async function byRoutedDid(repo: WebhookRepository, payload: PostCallEvent, endedFrom: string, endedTo: string): Promise<Attribution | undefined> {
  if (payload.agentNumber === null || payload.remoteNumber === null) return undefined;
  const candidates = await repo.routedCalls({
    provider: payload.provider, agentNumber: payload.agentNumber, remoteNumber: payload.remoteNumber,
    externalAgentId: payload.agentId, direction: payload.direction, endedFrom, endedTo,
  });
  if (new Set(candidates.map((c) => c.tenant_id)).size > 1) return undefined;
  const call = candidates.find((c) => c.conversation_id !== null && c.conversation_id === payload.conversationId) ?? closestCall(candidates, payload.endedAt);
  return call && { tenantId: call.tenant_id, callId: call.call_id, knownConversationId: call.conversation_id, via: 'routed_did' };
}

/**
 * The call a payload belongs to; `contested` when its conversation id is bound to calls of more
 * than one tenant (or to several calls); undefined when it attributes to nothing. The payload's
 * numbers, when it has them, decide through the route; the conversation id only places payloads
 * they do not (docs/WEBHOOKS.md "Attribution").
 */
export async function attribute(repo: WebhookRepository, input: AttributionInput): Promise<Attribution | Contested | undefined> {
  const endedFrom = isoTime(input.nowMs - input.windowMs);
  const endedTo = isoTime(input.nowMs);
  return (await byRoutedDid(repo, input.payload, endedFrom, endedTo)) ?? byConversation(repo, input.payload, endedFrom, endedTo);
}
