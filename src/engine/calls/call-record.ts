/**
 * @module The persisted shape of a call (docs/API.md "Calls"): what the engine writes at each state
 * change and what the API reads. One row per attempt, failed ones included; the CDR fields are
 * the row's times, end reason, SIP status and who hung up.
 */
import type { CallId, TenantId } from '../../common/ids.js';
import type { CallState } from './call-state.js';
import type { HangupBy } from './end-reason.js';

export type CallDirection = 'inbound' | 'outbound';
export type CallRecordState = CallState;

export interface CallRecord {
  id: CallId;
  tenant_id: TenantId;
  call_control_id: string;
  direction: CallDirection;
  state: CallRecordState;
  on_hold: boolean;
  from_number: string;
  /** Inbound: the caller asked for privacy (docs/DECISIONS.md "Caller identity and privacy"). */
  caller_privacy: boolean;
  to_number: string;
  carrier: string;
  record: boolean;
  agent_type: 'websocket' | 'imported';
  agent_url: string | null;
  agent_id: string | null;
  created_at: string;
  ringing_at: string | null;
  answered_at: string | null;
  ended_at: string | null;
  end_reason: string | null;
  sip_status: number | null;
  hangup_by: HangupBy | null;
  transfer_to: string | null;
  transfer_state: 'dialing' | 'connected' | 'failed' | null;
  transfer_started_at: string | null;
  conversation_id: string | null;
  recording_path: string | null;
}
