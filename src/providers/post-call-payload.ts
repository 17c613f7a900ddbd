/**
 * @module The normalized post-call payload every provider's webhook parser produces, and the
 * bounded readers they share: parsing never throws on any JSON value and never does unbounded work.
 */
import { isE164 } from '../common/phone-number.js';

/** The name of a vendor whose post-call webhook the gateway ingests (one with `VendorDescriptor.postCallWebhook`). */
export type PostCallProvider = string;

/** One line of a provider transcript. `offsetS` is seconds from the start of the call, when known. */
export interface TranscriptTurn {
  role: 'caller' | 'agent';
  text: string;
  offsetS: number | null;
}

/** Where the call's audio is: decoded inline bytes, or a URL to download with the safe downloader. */
export interface PostCallRecording {
  inline?: Buffer;
  url?: string;
  /** Declared or inferred media type; a download's Content-Type takes precedence. */
  mediaType: string;
}

/** A payload the gateway ingests, in the provider-neutral form attribution and storage use. */
export interface PostCallPayload {
  kind: 'post_call';
  provider: PostCallProvider;
  /** The provider's event name (`post_call_transcription`, `call_analyzed`, `end-of-call-report`...). */
  event: string;
  /** The provider's id of the conversation or call: the duplicate and attribution key. */
  conversationId: string;
  /** The provider's agent id (the `external_agent_id` of an imported agent), when the payload has one. */
  agentId: string | null;
  /** The agent side's number in E.164 (the DID for inbound calls), when present and valid. */
  agentNumber: string | null;
  /** The other party's number in E.164, when present and valid. */
  remoteNumber: string | null;
  direction: 'inbound' | 'outbound' | null;
  /** Epoch milliseconds. */
  startedAt: number | null;
  /** Epoch milliseconds. */
  endedAt: number | null;
  turns: TranscriptTurn[];
  recording: PostCallRecording | null;
  /** Set when the provider reports that the call never connected (ElevenLabs `call_initiation_failure`). */
  failureReason: string | null;
  /** The payload as received, for the audit copy. */
  raw: unknown;
}

/** What a parser returns: ingest it, ignore an event the gateway does not take, or refuse a wrong shape. */
export type PostCallParseResult =
  | PostCallPayload
  | { kind: 'ignored'; reason: string }
  | { kind: 'invalid'; reason: string };

/** Bounds applied to every payload before and while it is read. */
export const POST_CALL_LIMITS = {
  /** Deeper JSON is refused: the audit copy is re-serialized later and must not overflow the stack. */
  maxDepth: 64,
  /** Values (objects, arrays and scalars) in one payload. */
  maxNodes: 2_000_000,
  /** Identifiers (conversation, agent): longer ones are refused, never truncated. */
  maxIdLength: 256,
  maxUrlLength: 4_096,
  /** Text of one turn; longer text is cut (the raw payload keeps the whole). */
  maxTurnText: 32_768,
  maxTurns: 20_000,
  /** Decoded inline audio (base64 MP3 of a whole call). */
  maxInlineAudioBytes: 64 * 1024 * 1024,
} as const;

/** A JSON object, as returned by {@link asRecord}. */
export type JsonRecord = Readonly<Record<string, unknown>>;

export const asRecord = (value: unknown): JsonRecord | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonRecord) : undefined;

/** Reads `value[k1][k2]...`, undefined as soon as a step is not an object. */
export function pick(value: unknown, ...path: string[]): unknown {
  let current: unknown = value;
  for (const key of path) {
    const record = asRecord(current);
    if (!record || !Object.hasOwn(record, key)) return undefined;
    current = record[key];
  }
  return current;
}

/**
 * Walks the value without recursion and reports whether it stays within the depth and size
 * bounds. Runs before any field is read, so the rest of a parser can assume a bounded value.
 */
export function checkBounds(value: unknown): string | null {
  const stack: { node: unknown; depth: number }[] = [{ node: value, depth: 1 }];
  let nodes = 0;
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (++nodes > POST_CALL_LIMITS.maxNodes) return 'payload has too many values';
    if (typeof node !== 'object' || node === null) continue;
    if (depth > POST_CALL_LIMITS.maxDepth) return 'payload is nested too deeply';
    const children = Array.isArray(node) ? (node as unknown[]) : Object.values(node);
    for (const child of children) stack.push({ node: child, depth: depth + 1 });
  }
  return null;
}

/** A non-empty identifier of bounded length, or undefined. */
export function readId(value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  return trimmed.length > 0 && trimmed.length <= POST_CALL_LIMITS.maxIdLength ? trimmed : undefined;
}

/** A phone number in E.164, or null: anything else (SIP URIs, `anonymous`, wrong types) is no number. */
export function readE164(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > 20) return null;
  const compact = value.replace(/[\s().-]/g, '');
  return isE164(compact) ? compact : null;
}

export function readDirection(value: unknown): 'inbound' | 'outbound' | null {
  return value === 'inbound' || value === 'outbound' ? value : null;
}

/** A finite number, or null. */
export const readNumber = (value: unknown): number | null =>
  typeof value === 'number' && Number.isFinite(value) ? value : null;

/** Epoch milliseconds from unix seconds. */
export function secondsToMs(value: unknown): number | null {
  const s = readNumber(value);
  return s !== null && s > 0 && s < 1e11 ? Math.round(s * 1000) : null;
}

/** Epoch milliseconds from a number of milliseconds or an RFC 3339 string. */
export function readTimestampMs(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) && value > 0 && value < 1e14 ? Math.round(value) : null;
  if (typeof value !== 'string' || value.length > 40) return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}

/** Turn text, cut to the limit; empty or non-string text is no turn. */
export function readTurnText(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value.length > POST_CALL_LIMITS.maxTurnText ? value.slice(0, POST_CALL_LIMITS.maxTurnText) : value;
  return text.trim().length > 0 ? text : undefined;
}

/** An https:// URL of bounded length; the downloader applies the real rules, this only filters junk. */
export function readRecordingUrl(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > POST_CALL_LIMITS.maxUrlLength) return undefined;
  return /^https?:\/\//i.test(value) ? value : undefined;
}

/** A media type guessed from a URL's file extension, for recordings given by URL. */
export function mediaTypeFromUrl(url: string): string {
  const path = url.split(/[?#]/, 1)[0]!.toLowerCase();
  if (path.endsWith('.wav')) return 'audio/wav';
  if (path.endsWith('.mp3')) return 'audio/mpeg';
  if (path.endsWith('.ogg') || path.endsWith('.opus')) return 'audio/ogg';
  return 'application/octet-stream';
}

// No whitespace alternatives: a class that can also match the tail would backtrack quadratically.
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Decodes base64 audio within the size limit; anything else is a reason string. */
export function decodeBase64Audio(value: unknown): Buffer | string {
  if (typeof value !== 'string' || value.length === 0) return 'audio is not a base64 string';
  if (value.length > Math.ceil((POST_CALL_LIMITS.maxInlineAudioBytes * 4) / 3) + 1024) return 'audio is too large';
  if (!BASE64.test(value)) return 'audio is not valid base64';
  const bytes = Buffer.from(value, 'base64');
  return bytes.length > 0 ? bytes : 'audio is empty';
}

/** Reads at most {@link POST_CALL_LIMITS.maxTurns} turns from an array with `read`, skipping entries it rejects. */
export function readTurns(value: unknown, read: (item: unknown) => TranscriptTurn | undefined): TranscriptTurn[] {
  if (!Array.isArray(value)) return [];
  const turns: TranscriptTurn[] = [];
  for (const item of value as unknown[]) {
    if (turns.length >= POST_CALL_LIMITS.maxTurns) break;
    const turn = read(item);
    if (turn) turns.push(turn);
  }
  return turns;
}
