/**
 * @module Finding the recording a call serves: the gateway's own, else the provider's archived
 * copy (docs/WEBHOOKS.md), with its size and the format its content shows. Read through the
 * recordings port, never on the event loop.
 */
import type { RecordingFiles } from '../common/recording-files.js';
import type { TenantId } from '../common/ids.js';
import type { Logger } from '../common/logger.js';
import type { CallRecord, Store } from '../storage/index.js';
import { inspectRecording, type RecordingFile } from './recording-format.js';

export interface CallRecordingDeps {
  store: Pick<Store, 'recordings'>;
  /** Where recordings are read (stored paths are its keys). */
  recordings: Pick<RecordingFiles, 'read'>;
  logger: Logger;
}

/** The call's recording file, or null when it has none or its file is gone (logged with the call id). */
export async function findCallRecording(
  deps: CallRecordingDeps,
  tenantId: TenantId,
  call: Pick<CallRecord, 'id' | 'recording_path'>,
): Promise<RecordingFile | null> {
  const path = call.recording_path ?? (await deps.store.recordings.get(tenantId, call.id, 'provider'))?.path;
  if (path === undefined) return null;
  try {
    return await inspectRecording(deps.recordings, path);
  } catch (err) {
    deps.logger.warn({ call_id: call.id, err }, 'recording file missing');
    return null;
  }
}
