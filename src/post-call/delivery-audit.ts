/**
 * @module What a delivery leaves in `webhook_deliveries`: the duplicate key, the audit copy of
 * the body (inline audio named by its SHA-256, never kept twice), the raw-body caps, and the
 * reference to the recording it brought (docs/WEBHOOKS.md "Raw payload caps").
 */
import { createHash } from 'node:crypto';
import type { TenantId } from '../common/ids.js';
import type { WebhookDelivery, WebhookRepository } from '../storage/index.js';
import type { PostCallEvent, WebhookOptions } from './post-call-ports.js';

export const sha256Hex = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

/** Provider + event + conversation id: a repeat of one event is a duplicate, another event of the call is not. Unique per tenant. */
export function deliveryKey(payload: PostCallEvent, bodySha256: string): string {
  return payload.conversationId === '' ? `${payload.provider}:sha256:${bodySha256}` : `${payload.provider}:${payload.event}:${payload.conversationId}`;
}

/**
 * The recording a payload brings, comparable between deliveries: inline audio by its SHA-256; a
 * URL by the SHA-256 of its origin and path (the query of a signed URL may change between two
 * events of one call; the URL itself is never stored, its query is often a credential).
 */
export function recordingRef(recording: PostCallEvent['recording']): string | null {
  if (recording?.inline) return `inline:${sha256Hex(recording.inline)}`;
  if (recording?.url === undefined) return null;
  try {
    const url = new URL(recording.url);
    return `url:${sha256Hex(`${url.origin}${url.pathname}`)}`;
  } catch {
    return `url:${sha256Hex(recording.url)}`;
  }
}

/** Long base64 strings (inline audio) are archived as the recording or not kept at all; the audit copy names them instead. */
const INLINE_AUDIO = /^[A-Za-z0-9+/]{4096,}={0,2}$/;

function withoutInlineAudio(value: unknown, marker: string): unknown {
  // Parsers refuse payloads nested deeper than 64 levels, so this recursion is bounded.
  if (typeof value === 'string') return value.length >= 4096 && INLINE_AUDIO.test(value) ? marker : value;
  if (Array.isArray(value)) return value.map((v: unknown) => withoutInlineAudio(v, marker));
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutInlineAudio(v, marker)]));
}

/** The body as received, with inline audio replaced by a note naming its SHA-256. */
export function auditCopy(payload: PostCallEvent, rawBody: string, applied: boolean): string {
  if (!payload.recording?.inline) return rawBody;
  const sha = sha256Hex(payload.recording.inline);
  const note = applied ? `[inline audio archived as the provider recording, sha256 ${sha}]` : `[inline audio not applied, sha256 ${sha}]`;
  return JSON.stringify(withoutInlineAudio(payload.raw, note));
}

/**
 * The audit copy, or null with the cap that left it out: a delivery is applied whatever its size,
 * but its body is kept only while the call's kept bodies (conflicts between tenants share one
 * allowance) and all kept bodies stay within their caps.
 */
export async function cappedCopy(
  repo: WebhookRepository,
  options: Pick<WebhookOptions, 'maxRawBytesPerCall' | 'maxRawBytesTotal'>,
  owner: { tenantId: TenantId | null; callId: string | null },
  copy: string,
): Promise<Pick<WebhookDelivery, 'payload_json' | 'payload_omitted'>> {
  const bytes = Buffer.byteLength(copy, 'utf8');
  const kept = await repo.keptRawBytes(owner.tenantId, owner.callId);
  if (kept.call + bytes > options.maxRawBytesPerCall) return { payload_json: null, payload_omitted: 'per_call_cap' };
  if (kept.total + bytes > options.maxRawBytesTotal) return { payload_json: null, payload_omitted: 'total_cap' };
  return { payload_json: copy, payload_omitted: null };
}
