/**
 * @module Ingesting one post-call payload: parse, attribute, deduplicate per tenant, check it
 * against what the call's first attribution stored, then store transcript, audit copy,
 * conversation id and inline recording in one transaction; a recording URL is downloaded
 * afterwards (docs/WEBHOOKS.md). Everything from the duplicate check to the store runs in the
 * call's {@link PerCallQueue}, so the recording file's write (off the event loop) cannot let
 * another delivery of the call in between.
 */
import { InvariantError } from '../common/errors.js';
import type { Clock } from '../common/clock.js';
import type { TenantId } from '../common/ids.js';
import type { Logger } from '../common/logger.js';
import type { Store, TranscriptTurn } from '../storage/index.js';
import { attribute, type Attribution } from './attribution.js';
import { auditCopy, cappedCopy, deliveryKey, recordingRef, sha256Hex } from './delivery-audit.js';
import type { PerCallQueue } from './per-call-queue.js';
import { archiveFromUrl, callKey, writeRecording } from './recording-archive.js';
import type { PostCallEvent, WebhookOptions, WebhookPorts, WebhookProvider } from './post-call-ports.js';

export { deliveryKey } from './delivery-audit.js';

export type IngestStatus = 'accepted' | 'duplicate' | 'ignored';

export interface IngestDeps {
  store: Pick<Store, 'webhooks' | 'transcripts' | 'recordings' | 'transaction'>;
  ports: WebhookPorts;
  options: WebhookOptions;
  clock: Clock;
  logger: Logger;
  /** The post-call tasks of each call, one at a time (one queue per process). */
  queue: PerCallQueue;
}

/** Why a delivery was kept for audit instead of applied (docs/WEBHOOKS.md "First attribution wins"). */
export type ConflictReason = 'conversation_id' | 'transcript' | 'recording' | 'contested_conversation';

/** Turns as the transcripts table keeps them: an unknown offset repeats the previous one (0 at the start). */
export function toStoredTurns(turns: PostCallEvent['turns']): TranscriptTurn[] {
  let last = 0;
  return turns.map((t) => {
    last = t.offsetS ?? last;
    return { role: t.role, text: t.text, offset_s: last };
  });
}

/**
 * First attribution wins: once a delivery gave the call its conversation id, transcript or
 * provider recording, a later one with another conversation id, other turns or another recording
 * changes nothing. Null when the payload agrees with everything stored (or nothing is stored yet).
 */
async function conflictWith(deps: IngestDeps, payload: PostCallEvent, target: Attribution, ref: string | null): Promise<ConflictReason | null> {
  const { tenantId, callId } = target;
  const earlier = await deps.store.webhooks.callDeliveries(tenantId, callId);
  const id = payload.conversationId;
  if (id !== '' && ((target.knownConversationId !== null && target.knownConversationId !== id) || earlier.conversationIds.some((c) => c !== id))) {
    return 'conversation_id';
  }
  const transcript = await deps.store.transcripts.get(tenantId, callId, 'provider');
  if (payload.turns.length > 0 && transcript && JSON.stringify(transcript) !== JSON.stringify(toStoredTurns(payload.turns))) return 'transcript';
  if (ref !== null) {
    // Rows stored before recording_ref existed: an inline recording is still known by its checksum.
    const archived = await deps.store.recordings.get(tenantId, callId, 'provider');
    const claimed = earlier.recordingRef ?? (archived?.origin === 'inline' ? `inline:${archived.sha256}` : null);
    if (claimed !== null && claimed !== ref) return 'recording';
  }
  return null;
}

/** Keeps a delivery for audit without applying it; the same body again under the same key is not kept twice. */
async function keepConflict(deps: IngestDeps, payload: PostCallEvent, rawBody: string, owner: Attribution | null, reason: ConflictReason): Promise<void> {
  const bodySha256 = sha256Hex(rawBody);
  const key = deliveryKey(payload, bodySha256);
  const tenantId: TenantId | null = owner?.tenantId ?? null;
  const callId = owner?.callId ?? null;
  // A conflict between tenants is logged and kept under neither: naming them would tell one about the other.
  const log = { provider: payload.provider, event: payload.event, status: 'conflict', reason, ...(owner ? { call_id: callId, tenant_id: tenantId } : {}) };
  if (await deps.store.webhooks.isRepeatedConflict(tenantId, callId, key, bodySha256)) {
    deps.logger.info(log, 'post-call webhook not applied: the same conflicting delivery again');
    return;
  }
  const omitted = await deps.store.transaction(async (tx) => {
    const copy = await cappedCopy(tx.webhooks, deps.options, { tenantId, callId }, auditCopy(payload, rawBody, false));
    await tx.webhooks.record({
      delivery_key: key, status: 'conflict', conflict_reason: reason, provider: payload.provider, event: payload.event,
      conversation_id: payload.conversationId || null, agent_id: payload.agentId, tenant_id: tenantId, call_id: callId,
      body_sha256: bodySha256, body_bytes: Buffer.byteLength(rawBody, 'utf8'), recording_ref: recordingRef(payload.recording), ...copy,
    });
    return copy.payload_omitted;
  });
  deps.logger.warn({ ...log, payload_omitted: omitted }, 'post-call webhook not applied: it conflicts with what an earlier delivery stored');
}

type Stored = { status: 'accepted'; payloadOmitted: string | null } | { status: 'duplicate' } | { status: 'conflict'; reason: ConflictReason };

/**
 * Stores an attributed payload, unless the tenant had it already (duplicate) or it conflicts with
 * the call's first attribution (then kept for audit only). Runs in the call's queue.
 */
async function storeAttributed(deps: IngestDeps, payload: PostCallEvent, target: Attribution, rawBody: string): Promise<Stored> {
  const stored = await storeAccepted(deps, payload, target, rawBody);
  if (stored.status === 'conflict') await keepConflict(deps, payload, rawBody, target, stored.reason);
  return stored;
}

async function storeAccepted(deps: IngestDeps, payload: PostCallEvent, target: Attribution, rawBody: string): Promise<Stored> {
  const { webhooks, recordings } = deps.store;
  const bodySha256 = sha256Hex(rawBody);
  const key = deliveryKey(payload, bodySha256);
  // Checked before any file is written, so a duplicate never replaces an archived recording.
  if (await webhooks.isDelivered(target.tenantId, key)) return { status: 'duplicate' };
  const ref = recordingRef(payload.recording);
  const reason = await conflictWith(deps, payload, target, ref);
  if (reason !== null) return { status: 'conflict', reason };
  // The same recording again (another event of the call) is not archived twice.
  const inline = payload.recording?.inline && !(await recordings.get(target.tenantId, target.callId, 'provider'))
    ? await writeRecording(deps.options.recordings, target, { bytes: payload.recording.inline, mediaType: payload.recording.mediaType, origin: 'inline' })
    : undefined;
  return deps.store.transaction(async (tx): Promise<Stored> => {
    const copy = await cappedCopy(tx.webhooks, deps.options, target, auditCopy(payload, rawBody, true));
    const fresh = await tx.webhooks.record({
      delivery_key: key, status: 'accepted', conflict_reason: null, provider: payload.provider, event: payload.event,
      conversation_id: payload.conversationId || null, agent_id: payload.agentId, tenant_id: target.tenantId, call_id: target.callId,
      body_sha256: bodySha256, body_bytes: Buffer.byteLength(rawBody, 'utf8'), recording_ref: ref, ...copy,
    });
    if (!fresh) return { status: 'duplicate' };
    if (payload.turns.length > 0 && !(await tx.transcripts.get(target.tenantId, target.callId, 'provider'))) {
      await tx.transcripts.save(target.callId, 'provider', toStoredTurns(payload.turns));
    }
    if (target.knownConversationId === null && payload.conversationId !== '') {
      await tx.webhooks.setConversationId(target.tenantId, target.callId, payload.conversationId);
    }
    if (inline) await tx.recordings.save(inline);
    return { status: 'accepted', payloadOmitted: copy.payload_omitted };
  });
}

/**
 * Ingests one well-formed JSON body for `provider`. The recording download, when there is one,
 * is awaited here (bounded by the downloader's time cap) after everything else is stored, so its
 * failure can never turn an accepted payload into an error. A delivery kept as a conflict is
 * answered `ignored`, like one that attributes to nothing, so the answer tells a poster nothing
 * about calls it does not know.
 */
export async function ingestPostCall(deps: IngestDeps, provider: WebhookProvider, body: unknown, rawBody: string): Promise<IngestStatus> {
  const vendor = deps.ports.vendors.get(provider);
  // Routes exist only for the providers in the ports, so this is a wiring bug, not bad input.
  if (!vendor) throw new InvariantError(`no post-call webhook for ${provider}`);
  const parsed = vendor.parse(body);
  if (parsed.kind !== 'post_call') {
    deps.logger.debug({ provider, kind: parsed.kind, reason: parsed.reason }, 'post-call webhook ignored');
    return 'ignored';
  }
  const target = await attribute(deps.store.webhooks, { payload: parsed, nowMs: deps.clock.now(), windowMs: deps.options.attributionWindowMs });
  if (!target) {
    deps.logger.info({ provider, event: parsed.event }, 'post-call webhook ignored: not attributable to a call');
    return 'ignored';
  }
  if ('contested' in target) {
    await keepConflict(deps, parsed, rawBody, null, 'contested_conversation');
    return 'ignored';
  }
  const stored = await deps.queue.run(callKey(target), () => storeAttributed(deps, parsed, target, rawBody));
  if (stored.status === 'conflict') return 'ignored';
  if (stored.status === 'duplicate') return 'duplicate';
  deps.logger.info({
    provider, event: parsed.event, status: 'accepted', call_id: target.callId, tenant_id: target.tenantId, via: target.via, payload_omitted: stored.payloadOmitted,
  }, 'post-call webhook accepted');
  const url = parsed.recording?.inline ? undefined : parsed.recording?.url;
  if (url !== undefined) await archiveFromUrl(deps, provider, target, url);
  return 'accepted';
}
