/**
 * @module The end of calls their engine stopped carrying without hanging up: a crash found at the
 * next start (`gateway_restart`, recovery.ts) or an engine of the cluster that died, ended by
 * another (`gateway_failure`, docs/ARCHITECTURE.md "Process roles"). The final record says the
 * gateway hung up, when the call was last known up.
 */
import { isoTime } from '../../../common/time.js';
import type { CallRecord } from '../call-record.js';
import type { CallRecordStore } from '../ports.js';
import type { EndReasonCode } from './end-reason.js';

/** Why a call its engine no longer carries ended. */
export type CutOffReason = Extract<EndReasonCode, 'gateway_restart' | 'gateway_failure'>;

/** How one cut-off call ends. */
export interface CutOffEnd {
  reason: CutOffReason;
  /** When it ended (see {@link lastSignOfLife}). */
  endedAtMs: number;
  /** The recording recovered for it, if any (relative key); the record's own otherwise. */
  recordingPath?: string | null;
}

/**
 * Writes the final record of a call cut off with its engine: `hangup_by: gateway`, no SIP status,
 * a transfer still dialling failed. Like every final record, kept in the CDR journal if the
 * database refuses it now. Returns the record written.
 */
export function endCutOffCall(store: Pick<CallRecordStore, 'finish'>, call: CallRecord, end: CutOffEnd): CallRecord {
  const ended: CallRecord = {
    ...call, state: 'ended', on_hold: false, ended_at: isoTime(end.endedAtMs), end_reason: end.reason, sip_status: null,
    hangup_by: 'gateway', transfer_state: call.transfer_state === 'dialing' ? 'failed' : call.transfer_state,
    recording_path: end.recordingPath === undefined ? call.recording_path : end.recordingPath,
  };
  store.finish({ call: ended, transcripts: [] });
  return ended;
}

/**
 * When a cut-off call was last known up: the latest of the traces (an engine's last heartbeat or
 * lease renewal, the recording's last write), kept between the call's answer (or creation) and
 * now. Ending it when it is found instead would bill the caller for all the time it was down.
 * With no trace at all, the call ends now.
 */
export function lastSignOfLife(call: Pick<CallRecord, 'answered_at' | 'created_at'>, traces: readonly (number | null)[], nowMs: number): number {
  const known = traces.filter((ms): ms is number => ms !== null);
  if (known.length === 0) return nowMs;
  const floor = Date.parse(call.answered_at ?? call.created_at);
  return Math.min(nowMs, Math.max(floor, Math.floor(Math.max(...known))));
}
