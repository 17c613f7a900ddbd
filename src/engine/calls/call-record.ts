/**
 * @module The persisted shape of a call (docs/API.md "Calls"): what the engine writes at each state
 * change and what the API reads. One row per attempt, failed ones included; the CDR fields are
 * the row's times, end reason, SIP status and who hung up.
 */
import type { CallId, TenantId } from '../../common/ids.js';
import type { CallState } from './call-state.js';
import type { HangupBy } from './ending/end-reason.js';
import type { CallQuality } from './quality/call-quality.js';

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
  /**
   * Inbound: the STIR/SHAKEN verification status the carrier put in P-Asserted-Identity or From
   * (`verstat`, e.g. `TN-Validation-Passed`), or null (docs/API.md "Caller verification").
   */
  caller_verstat: string | null;
  /** Inbound: the INVITE carried an RFC 8224 Identity header. */
  caller_identity_header: boolean;
  /** Inbound: the carrier's headers its `calls.carry_headers` let through (docs/API.md "SIP headers carried through"); null when none. */
  sip_headers: Record<string, string> | null;
  /** Outbound with machine_detection: what answered (docs/API.md "Answering-machine detection"); null until decided. */
  amd_result: 'human' | 'machine' | 'fax' | 'unknown' | null;
  amd_decided_after_ms: number | null;
  amd_beep_at_ms: number | null;
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
  /** Each RTP leg's figures and MOS when the call ended (docs/API.md "Call quality"); null for a call never answered. */
  quality: CallQuality | null;
}

/** The call detail record of an ended call: its times, and the durations billing reads (docs/DECISIONS.md "Calls", CDR arithmetic). */
export interface CallDetailRecord {
  started_at: string;
  answered_at: string | null;
  ended_at: string;
  /** From creation to end, in seconds with millisecond precision. */
  duration_s: number;
  /** From answer to end, rounded up to whole seconds; 0 if never answered. */
  billable_s: number;
  end_reason: string;
  sip_status: number | null;
  hangup_by: HangupBy | null;
  quality: CallQuality | null;
}

/**
 * The CDR of a call, or null while it is live. Durations are never negative (an end stamped
 * before the answer by a clock step reads 0), and a part of a second answered is billed as a
 * whole second.
 */
export function callDetailRecord(call: CallRecord): CallDetailRecord | null {
  if (call.state !== 'ended' || call.ended_at === null) return null;
  const ended = Date.parse(call.ended_at);
  return {
    started_at: call.created_at, answered_at: call.answered_at, ended_at: call.ended_at,
    duration_s: Math.max(0, ended - Date.parse(call.created_at)) / 1000,
    billable_s: call.answered_at === null ? 0 : Math.ceil(Math.max(0, ended - Date.parse(call.answered_at)) / 1000),
    end_reason: call.end_reason ?? 'failed', sip_status: call.sip_status, hangup_by: call.hangup_by, quality: call.quality ?? null,
  };
}

/** The fields of a call record its public view reads (the live list holds at least these). */
export type CallViewFields = Pick<CallRecord,
  'id' | 'call_control_id' | 'direction' | 'state' | 'on_hold' | 'from_number' | 'to_number' | 'carrier' | 'record' | 'caller_privacy'
  | 'amd_result' | 'amd_decided_after_ms' | 'amd_beep_at_ms' | 'caller_verstat' | 'caller_identity_header' | 'agent_type' | 'agent_url' | 'agent_id'
  | 'created_at' | 'answered_at' | 'ended_at' | 'end_reason' | 'sip_status' | 'transfer_to' | 'transfer_state' | 'transfer_started_at'>;

/**
 * The Call as the API shows it (docs/API.md "Calls"): one view for `GET /v1/calls`, the command
 * answers and the `data.call` of call events (docs/EVENTS.md), so the three cannot drift apart.
 */
export function callView(c: CallViewFields) {
  return {
    id: c.id, call_control_id: c.call_control_id, direction: c.direction, state: c.state, on_hold: c.on_hold,
    from: c.from_number, to: c.to_number, carrier: c.carrier, record: c.record, caller_privacy: c.caller_privacy,
    amd: c.amd_result !== null ? { result: c.amd_result, decided_after_ms: c.amd_decided_after_ms ?? 0, beep_at_ms: c.amd_beep_at_ms } : null,
    caller_verification: c.direction === 'inbound' ? { verstat: c.caller_verstat, identity_header: c.caller_identity_header } : null,
    agent: c.agent_type === 'websocket' ? { type: 'websocket' as const, url: c.agent_url ?? '' } : { type: 'imported' as const, agent_id: c.agent_id ?? '' },
    created_at: c.created_at, answered_at: c.answered_at, ended_at: c.ended_at, end_reason: c.end_reason, sip_status: c.sip_status,
    transfer: c.transfer_to && c.transfer_state && c.transfer_started_at ? { to: c.transfer_to, state: c.transfer_state, started_at: c.transfer_started_at } : null,
  };
}
