/**
 * @module Retell post-call webhooks (`call_ended`, `call_analyzed`, body `{event, call}`) read
 * into the provider-neutral {@link PostCallPayload}.
 * Vendor reference: https://docs.retellai.com/features/webhook-overview
 */
import {
  asRecord,
  checkBounds,
  mediaTypeFromUrl,
  pick,
  readDirection,
  readE164,
  readId,
  readNumber,
  readRecordingUrl,
  readTimestampMs,
  readTurnText,
  readTurns,
  type PostCallParseResult,
  type TranscriptTurn,
} from '../post-call-payload.js';

const INGESTED = new Set(['call_ended', 'call_analyzed']);

/**
 * `transcript_object[]` items: `{role: agent|user|transfer_target, content, words[{word, start, end}]}`.
 * A transfer target is neither the caller nor the agent, so its turns stay only in the raw payload.
 */
function readTurn(item: unknown): TranscriptTurn | undefined {
  const role = pick(item, 'role');
  if (role !== 'user' && role !== 'agent') return undefined;
  const text = readTurnText(pick(item, 'content'));
  if (text === undefined) return undefined;
  const words = pick(item, 'words');
  const start = Array.isArray(words) && words.length > 0 ? readNumber(pick(words[0], 'start')) : null;
  return { role: role === 'user' ? 'caller' : 'agent', text, offsetS: start !== null && start >= 0 ? start : null };
}

/** Reads a Retell webhook body (already JSON-parsed). Never throws. */
export function parseRetellWebhook(json: unknown): PostCallParseResult {
  const envelope = asRecord(json);
  if (!envelope) return { kind: 'invalid', reason: 'payload is not a JSON object' };
  const event = envelope.event;
  if (typeof event !== 'string') return { kind: 'invalid', reason: 'event is missing' };
  if (!INGESTED.has(event)) return { kind: 'ignored', reason: `event ${event.slice(0, 64)} is not ingested` };
  const bounds = checkBounds(json);
  if (bounds) return { kind: 'invalid', reason: bounds };
  const call = asRecord(envelope.call);
  if (!call) return { kind: 'invalid', reason: 'call is not an object' };
  const conversationId = readId(call.call_id);
  if (!conversationId) return { kind: 'invalid', reason: 'call.call_id is missing' };
  const direction = readDirection(call.direction);
  // The agent's number is the called one on inbound calls and the calling one on outbound calls;
  // without a direction neither side can be named (web calls have no numbers at all).
  const from = readE164(call.from_number);
  const to = readE164(call.to_number);
  const url = readRecordingUrl(call.recording_url);
  return {
    kind: 'post_call',
    provider: 'retell',
    event,
    conversationId,
    agentId: readId(call.agent_id) ?? null,
    agentNumber: direction === 'inbound' ? to : direction === 'outbound' ? from : null,
    remoteNumber: direction === 'inbound' ? from : direction === 'outbound' ? to : null,
    direction,
    startedAt: readTimestampMs(call.start_timestamp),
    endedAt: readTimestampMs(call.end_timestamp),
    turns: readTurns(call.transcript_object, readTurn),
    recording: url ? { url, mediaType: mediaTypeFromUrl(url) } : null,
    failureReason: null,
    raw: json,
  };
}
