/**
 * @module Re-archiving a provider's recording into the recordings folder: inline audio written as is, or
 * a URL fetched through the safe downloader under the provider's allow-list and caps; written
 * through the recordings port.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { RecordingFiles } from '../common/recording-files.js';
import { InvariantError } from '../common/errors.js';
import type { TenantId } from '../common/ids.js';
import type { Logger } from '../common/logger.js';
import type { RecordingRecord, Store } from '../storage/index.js';
import type { PerCallQueue } from './per-call-queue.js';
import type { WebhookOptions, WebhookPorts, WebhookProvider } from './post-call-ports.js';

const EXTENSIONS: Record<string, string> = {
  'audio/mpeg': 'mp3', 'audio/mp3': 'mp3', 'audio/wav': 'wav', 'audio/x-wav': 'wav', 'audio/wave': 'wav',
  'audio/ogg': 'ogg', 'audio/opus': 'opus', 'audio/webm': 'webm', 'audio/mp4': 'm4a', 'audio/flac': 'flac',
};

/** Ids are the gateway's own (`ten_…`, `call_…`); anything else must never become a path. */
const SAFE_ID = /^[A-Za-z0-9_]{1,80}$/;

/** `type/subtype` in lower case, or application/octet-stream when the value is not one. */
export function normalizeMediaType(value: string): string {
  const type = value.split(';', 1)[0]!.trim().toLowerCase();
  return /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/.test(type) ? type : 'application/octet-stream';
}

/** `<tenant>/<call>.provider.<ext>`, relative to the recordings folder. */
export function providerRecordingPath(tenantId: TenantId, callId: string, mediaType: string): string {
  if (!SAFE_ID.test(tenantId) || !SAFE_ID.test(callId)) throw new InvariantError(`unsafe id in a recording path: ${tenantId}/${callId}`);
  return join(tenantId, `${callId}.provider.${EXTENSIONS[mediaType] ?? 'bin'}`);
}

/**
 * Writes the file atomically (temporary name, then rename) without holding the event loop (the
 * audio may be megabytes; live calls' media runs on the same loop), and returns what the
 * recordings table keeps. The file is readable by the gateway's user only (0600). Callers run it
 * in the call's {@link PerCallQueue}, so no other write to the same path is under way.
 */
export async function writeRecording(
  recordings: Pick<RecordingFiles, 'write'>,
  target: { tenantId: TenantId; callId: string },
  audio: { bytes: Buffer; mediaType: string; origin: 'inline' | 'download' },
): Promise<Omit<RecordingRecord, 'created_at'>> {
  const mediaType = normalizeMediaType(audio.mediaType);
  const path = providerRecordingPath(target.tenantId, target.callId, mediaType);
  await recordings.write(path, audio.bytes);
  return {
    call_id: target.callId, tenant_id: target.tenantId, source: 'provider', path, media_type: mediaType,
    bytes: audio.bytes.length, sha256: createHash('sha256').update(audio.bytes).digest('hex'), origin: audio.origin,
  };
}

export interface ArchiveDeps {
  store: Pick<Store, 'recordings'>;
  ports: WebhookPorts;
  options: WebhookOptions;
  logger: Logger;
  /** The post-call tasks of each call, one at a time. */
  queue: PerCallQueue;
}

/** The host of a URL for logs: recording URLs are often signed, and their query is a credential. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '(unparsable)';
  }
}

/**
 * Downloads the payload's recording and archives it. Runs after acceptance is stored, bounded by
 * the downloader's time cap; every failure is logged with the call id and never reaches the client.
 */
export async function archiveFromUrl(
  deps: ArchiveDeps,
  provider: WebhookProvider,
  target: { tenantId: TenantId; callId: string },
  url: string,
): Promise<void> {
  const log = { provider, call_id: target.callId, tenant_id: target.tenantId, host: hostOf(url) };
  // First attribution wins (docs/WEBHOOKS.md): a provider recording already archived stays.
  if (await deps.store.recordings.get(target.tenantId, target.callId, 'provider')) {
    deps.logger.info(log, 'recording URL not fetched: the call has its provider recording already');
    return;
  }
  const allowedHosts = deps.options.recordingHosts[provider] ?? [];
  if (allowedHosts.length === 0) {
    deps.logger.info(log, 'recording URL not fetched: no recording hosts allowed for this provider');
    return;
  }
  const result = await deps.ports.downloadRecording(url, {
    allowedHosts, maxBytes: deps.options.downloadMaxBytes, timeoutMs: deps.options.downloadTimeoutMs, maxRedirects: deps.options.downloadMaxRedirects,
  });
  if (!result.ok) {
    deps.logger.warn({ ...log, reason: result.reason, detail: result.detail }, 'recording download refused or failed');
    return;
  }
  try {
    await deps.queue.run(callKey(target), async () => {
      // Another event of the same call may have archived it while this download ran.
      if (await deps.store.recordings.get(target.tenantId, target.callId, 'provider')) return;
      await deps.store.recordings.save(await writeRecording(deps.options.recordings, target, { bytes: result.bytes, mediaType: result.mediaType, origin: 'download' }));
      deps.logger.info({ ...log, bytes: result.bytes.length, sha256: result.sha256 }, 'provider recording archived');
    });
  } catch (err) {
    deps.logger.error({ ...log, err }, 'archiving the downloaded recording failed');
  }
}

/** The queue key of a call: ids are the gateway's own, so `/` cannot occur in either. */
export const callKey = (target: { tenantId: TenantId; callId: string }): string => `${target.tenantId}/${target.callId}`;
