/**
 * @module Ingesting one post-call payload: parse, attribute, deduplicate, then store transcript,
 * audit copy, conversation id and inline recording in one transaction; a recording URL is
 * downloaded afterwards (contract section 7).
 */
import { createHash } from 'node:crypto';
import type { Clock } from '../../../common/clock.js';
import type { Logger } from '../../../common/logger.js';
import type { Store, TranscriptTurn } from '../../../storage/index.js';
import { attribute, type Attribution } from './attribution.js';
import { archiveFromUrl, writeRecording } from './recording-archive.js';
import type { PostCallEvent, WebhookOptions, WebhookPorts, WebhookProvider } from './webhook-ports.js';

export type IngestStatus = 'accepted' | 'duplicate' | 'ignored';

export interface IngestDeps {
  store: Pick<Store, 'webhooks' | 'transcripts' | 'recordings' | 'transaction'>;
  ports: WebhookPorts;
  options: WebhookOptions;
  clock: Clock;
  logger: Logger;
}

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** Provider + event + conversation id: a repeat of one event is a duplicate, another event of the call is not. */
export function deliveryKey(payload: PostCallEvent, bodySha256: string): string {
  return payload.conversationId === '' ? `${payload.provider}:sha256:${bodySha256}` : `${payload.provider}:${payload.event}:${payload.conversationId}`;
}

/** Turns as the transcripts table keeps them: an unknown offset repeats the previous one (0 at the start). */
export function toStoredTurns(turns: PostCallEvent['turns']): TranscriptTurn[] {
  let last = 0;
  return turns.map((t) => {
    last = t.offsetS ?? last;
    return { role: t.role, text: t.text, offset_s: last };
  });
}

/** Long base64 strings (inline audio) are already archived as the recording; the audit copy names it instead. */
const INLINE_AUDIO = /^[A-Za-z0-9+/]{4096,}={0,2}$/;

function withoutInlineAudio(value: unknown, marker: string): unknown {
  // Parsers refuse payloads nested deeper than 64 levels, so this recursion is bounded.
  if (typeof value === 'string') return value.length >= 4096 && INLINE_AUDIO.test(value) ? marker : value;
  if (Array.isArray(value)) return value.map((v: unknown) => withoutInlineAudio(v, marker));
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutInlineAudio(v, marker)]));
}

function auditCopy(payload: PostCallEvent, rawBody: string, inlineSha256: string | undefined): string {
  if (inlineSha256 === undefined) return rawBody;
  return JSON.stringify(withoutInlineAudio(payload.raw, `[inline audio archived as the provider recording, sha256 ${inlineSha256}]`));
}

/** Stores an attributed payload; false when the same delivery was stored first (a duplicate). */
function storeAccepted(deps: IngestDeps, payload: PostCallEvent, target: Attribution, rawBody: string): boolean {
  const bodySha256 = sha256(rawBody);
  const key = deliveryKey(payload, bodySha256);
  // Checked before any file is written, so a duplicate never replaces an archived recording.
  if (deps.store.webhooks.isDelivered(key)) return false;
  const inline = payload.recording?.inline
    ? writeRecording(deps.options.dataDir, target, { bytes: payload.recording.inline, mediaType: payload.recording.mediaType, origin: 'inline' })
    : undefined;
  return deps.store.transaction(() => {
    const fresh = deps.store.webhooks.record({
      delivery_key: key, provider: payload.provider, event: payload.event, conversation_id: payload.conversationId || null,
      agent_id: payload.agentId, tenant_id: target.tenantId, call_id: target.callId, body_sha256: bodySha256,
      payload_json: auditCopy(payload, rawBody, inline?.sha256),
    });
    if (!fresh) return false;
    if (payload.turns.length > 0) deps.store.transcripts.save(target.callId, 'provider', toStoredTurns(payload.turns));
    if (target.knownConversationId === null && payload.conversationId !== '') {
      deps.store.webhooks.setConversationId(target.tenantId, target.callId, payload.conversationId);
    }
    if (inline) deps.store.recordings.save(inline);
    return true;
  });
}

/**
 * Ingests one well-formed JSON body for `provider`. The recording download, when there is one,
 * is awaited here (bounded by the downloader's time cap) after everything else is stored, so its
 * failure can never turn an accepted payload into an error.
 */
export async function ingestPostCall(deps: IngestDeps, provider: WebhookProvider, body: unknown, rawBody: string): Promise<IngestStatus> {
  const parsed = deps.ports.parsers[provider](body);
  if (parsed.kind !== 'post_call') {
    deps.logger.debug({ provider, kind: parsed.kind, reason: parsed.reason }, 'post-call webhook ignored');
    return 'ignored';
  }
  const target = attribute(deps.store.webhooks, { payload: parsed, nowMs: deps.clock.now(), windowMs: deps.options.attributionWindowMs });
  if (!target) {
    deps.logger.info({ provider, event: parsed.event }, 'post-call webhook ignored: not attributable to a call');
    return 'ignored';
  }
  if (!storeAccepted(deps, parsed, target, rawBody)) return 'duplicate';
  deps.logger.info({ provider, event: parsed.event, call_id: target.callId, tenant_id: target.tenantId, via: target.via }, 'post-call webhook accepted');
  const url = parsed.recording?.inline ? undefined : parsed.recording?.url;
  if (url !== undefined) await archiveFromUrl(deps, provider, target, url);
  return 'accepted';
}
