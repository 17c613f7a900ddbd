/**
 * @module ElevenLabs post-call webhooks (`post_call_transcription`, `post_call_audio`,
 * `call_initiation_failure`) read into the provider-neutral {@link PostCallPayload}.
 * Vendor reference: https://elevenlabs.io/docs/agents-platform/workflows/post-call-webhooks
 */
import {
  asRecord,
  checkBounds,
  decodeBase64Audio,
  pick,
  readDirection,
  readE164,
  readId,
  readNumber,
  readTurnText,
  readTurns,
  secondsToMs,
  type JsonRecord,
  type PostCallParseResult,
  type PostCallPayload,
  type TranscriptTurn,
} from '../post-call-payload.js';

const EVENTS = ['post_call_transcription', 'post_call_audio', 'call_initiation_failure'] as const;
type ElevenLabsEvent = (typeof EVENTS)[number];
const isIngested = (type: string): type is ElevenLabsEvent => (EVENTS as readonly string[]).includes(type);

/** `transcript[]` items: `role` user|agent, `message`, `time_in_call_secs`. Tool-only turns have no message. */
function readTurn(item: unknown): TranscriptTurn | undefined {
  const role = pick(item, 'role');
  if (role !== 'user' && role !== 'agent') return undefined;
  const text = readTurnText(pick(item, 'message'));
  if (text === undefined) return undefined;
  const offset = readNumber(pick(item, 'time_in_call_secs'));
  return { role: role === 'user' ? 'caller' : 'agent', text, offsetS: offset !== null && offset >= 0 ? offset : null };
}

function base(event: ElevenLabsEvent, conversationId: string, agentId: string, raw: unknown): PostCallPayload {
  return {
    kind: 'post_call', provider: 'elevenlabs', event, conversationId, agentId,
    agentNumber: null, remoteNumber: null, direction: null, startedAt: null, endedAt: null,
    turns: [], recording: null, failureReason: null, raw,
  };
}

/**
 * `data.metadata.phone_call` is discriminated by `type` (`sip_trunking`, `twilio`, `exotel`); all
 * carry `agent_number`, `external_number` and `direction`, so the type itself is not needed.
 */
function readTranscription(payload: PostCallPayload, data: JsonRecord): PostCallPayload {
  const metadata = pick(data, 'metadata');
  const phoneCall = pick(metadata, 'phone_call');
  const startedAt = secondsToMs(pick(metadata, 'start_time_unix_secs'));
  const duration = readNumber(pick(metadata, 'call_duration_secs'));
  return {
    ...payload,
    agentNumber: readE164(pick(phoneCall, 'agent_number')),
    remoteNumber: readE164(pick(phoneCall, 'external_number')),
    direction: readDirection(pick(phoneCall, 'direction')),
    startedAt,
    endedAt: startedAt !== null && duration !== null && duration >= 0 ? startedAt + Math.round(duration * 1000) : null,
    turns: readTurns(pick(data, 'transcript'), readTurn),
  };
}

/**
 * `data.metadata` is `{type: "sip"|"twilio", body}`: SIP bodies use `from_number`/`to_number`,
 * Twilio bodies are StatusCallback form fields (`From`/`To`). ElevenLabs only reports initiation
 * failures (busy, no-answer) for calls it places, so the caller side is the agent.
 */
function readInitiationFailure(payload: PostCallPayload, data: JsonRecord): PostCallPayload {
  const body = pick(data, 'metadata', 'body');
  const from = pick(body, 'from_number') ?? pick(body, 'From');
  const to = pick(body, 'to_number') ?? pick(body, 'To');
  const reason = pick(data, 'failure_reason');
  return {
    ...payload,
    agentNumber: readE164(from),
    remoteNumber: readE164(to),
    direction: 'outbound',
    failureReason: typeof reason === 'string' && reason.length <= 64 ? reason : 'unknown',
  };
}

/** `post_call_audio` carries only the ids and `full_audio` (base64 MP3): attribution is by conversation id. */
function readAudio(payload: PostCallPayload, data: JsonRecord): PostCallParseResult {
  const audio = decodeBase64Audio(pick(data, 'full_audio'));
  if (typeof audio === 'string') return { kind: 'invalid', reason: `data.full_audio: ${audio}` };
  return { ...payload, recording: { inline: audio, mediaType: 'audio/mpeg' } };
}

/** Reads an ElevenLabs webhook body (already JSON-parsed). Never throws. */
export function parseElevenLabsWebhook(json: unknown): PostCallParseResult {
  const envelope = asRecord(json);
  if (!envelope) return { kind: 'invalid', reason: 'payload is not a JSON object' };
  const type = envelope.type;
  if (typeof type !== 'string') return { kind: 'invalid', reason: 'type is missing' };
  if (!isIngested(type)) return { kind: 'ignored', reason: `event type ${type.slice(0, 64)} is not ingested` };
  const bounds = checkBounds(json);
  if (bounds) return { kind: 'invalid', reason: bounds };
  const data = asRecord(envelope.data);
  if (!data) return { kind: 'invalid', reason: 'data is not an object' };
  const conversationId = readId(data.conversation_id);
  if (!conversationId) return { kind: 'invalid', reason: 'data.conversation_id is missing' };
  const agentId = readId(data.agent_id);
  if (!agentId) return { kind: 'invalid', reason: 'data.agent_id is missing' };
  const payload = base(type, conversationId, agentId, json);
  if (type === 'post_call_audio') return readAudio(payload, data);
  if (type === 'call_initiation_failure') return readInitiationFailure(payload, data);
  return readTranscription(payload, data);
}
