/**
 * @module Start-up recovery (docs/RELIABILITY.md "Crash during live calls, and secrets"): calls a crash left unfinished are ended with
 * `gateway_restart`, their CDRs written (only this engine's: docs/ARCHITECTURE.md "Process roles"), and the recordings they were writing repaired (header
 * sizes from the data on disk) and attached, so the tenant keeps what was recorded.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock } from '../../../common/clock.js';
import type { Logger } from '../../../common/logger.js';
import { FolderRecordingFiles, type RecordingFiles } from '../../../common/recording-files.js';
import { repairRecording } from '../../media/index.js';
import type { CallRecord } from '../call-record.js';
import { endCutOffCall, lastSignOfLife } from './cut-off.js';
import { lastHeartbeatMs } from './heartbeat.js';
import type { CallRecordStore } from '../ports.js';

/** Where a call's own recording lives: its key in the recordings folder (docs/ARCHITECTURE.md "Process roles"). */
export const recordingPathOf = (call: Pick<CallRecord, 'tenant_id' | 'id'>): string => join(call.tenant_id, `${call.id}.wav`);

/** Whose calls recovery ends, and where their recordings are. */
export interface RecoveryScope {
  /** The engine's node id: only its calls are ended (and those of rows that name no node). */
  nodeId?: string;
  /** The recordings port; the recordings folder of the data folder when absent. */
  recordings?: Pick<RecordingFiles, 'localFile'>;
}

/** Ends every unfinished call of this node; returns how many there were. Run before the SIP stack takes calls. */
export async function recoverUnfinishedCalls(store: CallRecordStore, dataDir: string, clock: Clock, logger: Logger, scope: RecoveryScope = {}): Promise<number> {
  const unfinished = await store.unfinished(scope.nodeId);
  const recordings = scope.recordings ?? new FolderRecordingFiles(join(dataDir, 'recordings'));
  const engineLastAlive = lastHeartbeatMs(dataDir);
  for (const call of unfinished) {
    let recordingPath = call.recording_path;
    let recordingWritten: number | null = null;
    if (call.record && recordingPath === null) {
      const relative = recordingPathOf(call);
      const file = recordings.localFile(relative);
      if (file !== null && existsSync(file)) {
        recordingWritten = statSync(file).mtimeMs;
        try {
          const outcome = await repairRecording(file);
          if (outcome.status !== 'not-wav') recordingPath = relative;
          logger.info({ call_id: call.id, outcome: outcome.status }, 'recording recovered');
        } catch (err) {
          logger.error({ call_id: call.id, err }, 'cannot repair a recording');
        }
      }
    }
    const endedAtMs = lastSignOfLife(call, [engineLastAlive, recordingWritten], clock.now());
    endCutOffCall(store, call, { reason: 'gateway_restart', endedAtMs, recordingPath });
  }
  if (unfinished.length > 0) logger.warn({ calls: unfinished.length }, 'ended calls left unfinished by a restart');
  return unfinished.length;
}
