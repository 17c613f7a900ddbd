/**
 * @module Finding the recording a call serves: the gateway's own, else the provider's archived
 * copy (docs/WEBHOOKS.md), with its size and the format its content shows. Files are read
 * through fs/promises, never on the event loop.
 */
import { isAbsolute, join } from 'node:path';
import type { TenantId } from '../common/ids.js';
import type { Logger } from '../common/logger.js';
import type { CallRecord, Store } from '../storage/index.js';
import { inspectRecording, type RecordingFile } from './recording-format.js';

export interface CallRecordingDeps {
  store: Pick<Store, 'recordings'>;
  /** Relative recording paths are under this folder. */
  dataDir: string;
  logger: Logger;
}

/** The call's recording file, or null when it has none or its file is gone (logged with the call id). */
export async function findCallRecording(
  deps: CallRecordingDeps,
  tenantId: TenantId,
  call: Pick<CallRecord, 'id' | 'recording_path'>,
): Promise<RecordingFile | null> {
  const path = call.recording_path ?? deps.store.recordings.get(tenantId, call.id, 'provider')?.path;
  if (path === undefined) return null;
  const file = isAbsolute(path) ? path : join(deps.dataDir, path);
  try {
    return await inspectRecording(file);
  } catch (err) {
    deps.logger.warn({ call_id: call.id, err }, 'recording file missing');
    return null;
  }
}
