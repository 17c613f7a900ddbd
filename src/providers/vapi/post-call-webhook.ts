/**
 * @module Vapi server messages: `end-of-call-report` read into the provider-neutral
 * {@link PostCallPayload}, from `message.artifact` and from the older top-level fields.
 * Vendor reference: https://docs.vapi.ai/server-url/events (ServerMessageEndOfCallReport)
 */
import {
  asRecord,
  checkBounds,
  mediaTypeFromUrl,
  pick,
  readE164,
  readId,
  readNumber,
  readRecordingUrl,
  readTimestampMs,
  readTurnText,
  readTurns,
  POST_CALL_LIMITS,
  type JsonRecord,
  type PostCallParseResult,
  type TranscriptTurn,
} from '../post-call-payload.js';

/** `messages[]`: roles `user`, `bot` (`assistant` in OpenAI form), `system`, `tool_calls`...; `secondsFromStart`. */
function readMessageTurn(item: unknown): TranscriptTurn | undefined {
  const role = pick(item, 'role');
  const mapped = role === 'user' ? 'caller' : role === 'bot' || role === 'assistant' ? 'agent' : undefined;
  if (!mapped) return undefined;
  const text = readTurnText(pick(item, 'message') ?? pick(item, 'content'));
  if (text === undefined) return undefined;
  const offset = readNumber(pick(item, 'secondsFromStart'));
  return { role: mapped, text, offsetS: offset !== null && offset >= 0 ? offset : null };
}

/** The plain transcript (`User: ...` / `AI: ...` lines), used only when no message list came. */
function turnsFromTranscript(value: unknown): TranscriptTurn[] {
  if (typeof value !== 'string') return [];
  const turns: TranscriptTurn[] = [];
  for (const line of value.split('\n', POST_CALL_LIMITS.maxTurns)) {
    const match = /^(User|AI|Assistant|Bot): ?(.*)$/.exec(line.length > POST_CALL_LIMITS.maxTurnText ? line.slice(0, POST_CALL_LIMITS.maxTurnText) : line);
    const text = match ? readTurnText(match[2]) : undefined;
    if (match && text !== undefined) turns.push({ role: match[1] === 'User' ? 'caller' : 'agent', text, offsetS: null });
  }
  return turns;
}

function readTurnsOf(message: JsonRecord): TranscriptTurn[] {
  for (const list of [pick(message, 'artifact', 'messages'), message.messages]) {
    const turns = readTurns(list, readMessageTurn);
    if (turns.length > 0) return turns;
  }
  const fromArtifact = turnsFromTranscript(pick(message, 'artifact', 'transcript'));
  return fromArtifact.length > 0 ? fromArtifact : turnsFromTranscript(message.transcript);
}

/** The mono mix first (what the gateway plays back), then the older names. */
function readRecording(message: JsonRecord): { url: string; mediaType: string } | null {
  const candidates = [
    pick(message, 'artifact', 'recording', 'mono', 'combinedUrl'),
    pick(message, 'artifact', 'recordingUrl'),
    message.recordingUrl,
    pick(message, 'artifact', 'recording', 'stereoUrl'),
    pick(message, 'artifact', 'stereoRecordingUrl'),
    message.stereoRecordingUrl,
  ];
  for (const candidate of candidates) {
    const url = readRecordingUrl(candidate);
    if (url) return { url, mediaType: mediaTypeFromUrl(url) };
  }
  return null;
}

function readDirectionOf(call: unknown): 'inbound' | 'outbound' | null {
  const type = pick(call, 'type');
  return type === 'inboundPhoneCall' ? 'inbound' : type === 'outboundPhoneCall' ? 'outbound' : null;
}

/** Reads a Vapi server-message body (already JSON-parsed). Never throws. */
export function parseVapiWebhook(json: unknown): PostCallParseResult {
  const message = asRecord(pick(json, 'message'));
  if (!message) return { kind: 'invalid', reason: 'message is not an object' };
  const type = message.type;
  if (typeof type !== 'string') return { kind: 'invalid', reason: 'message.type is missing' };
  if (type !== 'end-of-call-report') return { kind: 'ignored', reason: `message type ${type.slice(0, 64)} is not ingested` };
  const bounds = checkBounds(json);
  if (bounds) return { kind: 'invalid', reason: bounds };
  const call = message.call;
  const conversationId = readId(pick(call, 'id'));
  if (!conversationId) return { kind: 'invalid', reason: 'message.call.id is missing' };
  return {
    kind: 'post_call',
    provider: 'vapi',
    event: type,
    conversationId,
    agentId: readId(pick(message, 'assistant', 'id')) ?? readId(pick(call, 'assistantId')) ?? null,
    agentNumber: readE164(pick(message, 'phoneNumber', 'number')) ?? readE164(pick(call, 'phoneNumber', 'number')),
    remoteNumber: readE164(pick(message, 'customer', 'number')) ?? readE164(pick(call, 'customer', 'number')),
    direction: readDirectionOf(call),
    startedAt: readTimestampMs(message.startedAt) ?? readTimestampMs(pick(call, 'startedAt')),
    endedAt: readTimestampMs(message.endedAt) ?? readTimestampMs(pick(call, 'endedAt')),
    turns: readTurnsOf(message),
    recording: readRecording(message),
    failureReason: null,
    raw: json,
  };
}
