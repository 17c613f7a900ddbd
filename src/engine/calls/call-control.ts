/**
 * @module What the control API may ask of live calls (docs/API.md "Calls"): place, hold, unhold,
 * hang up, transfer, and read a live call's media session. Outcomes are values; the API maps each
 * failure to its problem+json code.
 */
import type { TenantId } from '../../common/ids.js';
import type { CallRecord } from './call-record.js';
import type { CallSessionSnapshot } from './session-snapshot.js';

/** Why a command was not carried out. */
export type CallCommandFailure =
  /** No such call for this tenant (or another tenant's). */
  | { error: 'not_found' }
  /** The call is not in a state that allows the command (not active, or ended). */
  | { error: 'call_not_active' }
  /** A transfer of this call is already under way (docs/API.md, "Call commands"). */
  | { error: 'transfer_in_progress' }
  /** The tenant or the carrier is at its concurrent-call limit. */
  | { error: 'concurrency_limit'; retryAfterSeconds: number }
  | { error: 'unknown_carrier' }
  /** The carrier's caller-ID policy does not let the tenant present that `from` (docs/API.md "Caller IDs"). */
  | { error: 'caller_id_not_allowed' }
  /** The carrier has no outbound target, or its address cannot be resolved. */
  | { error: 'carrier_unavailable'; detail: string }
  /** The gateway is draining or out of media ports. */
  | { error: 'unavailable'; detail: string };

export type CallCommandResult = { call: CallRecord } | CallCommandFailure;

/**
 * An outbound call to place: the carrier's callee is connected to the agent, a WebSocket
 * (`agentUrl`) or an imported agent of the tenant (`agentId`, in its connection mode); exactly one.
 */
export interface PlaceCallRequest {
  tenantId: TenantId;
  from: string;
  to: string;
  carrier: string;
  agentUrl?: string;
  agentId?: string;
  /** The imported agent's connection mode (docs/API.md "Calls"); with `agentId`. */
  agentMode?: 'sip_trunk' | 'media_bridge';
  record: boolean;
  /** X- headers for the carrier's INVITE (docs/API.md "SIP headers carried through"), already checked. */
  sipHeaders?: Record<string, string>;
  /** Flat strings for a WebSocket agent's `start.customParameters`, already checked. */
  customParameters?: Record<string, string>;
  /** docs/API.md "Answering-machine detection"; `off` when absent. */
  machineDetection?: MachineDetection;
  /** With `hold_until_result`: what a machine gets; `hangup` when absent. */
  onMachine?: 'hangup' | 'connect';
  /** With `hold_until_result` and `onMachine: connect`: connect after the beep or the greeting's end. */
  waitForBeep?: boolean;
}

/** docs/API.md "Answering-machine detection". */
export type MachineDetection = 'off' | 'async' | 'hold_until_result';

export interface CallControl {
  /** Starts the call and answers at once with its record (state `initiated`). */
  place(request: PlaceCallRequest): Promise<CallCommandResult>;
  /** Both legs muted, recording and transcription paused; idempotent. */
  hold(tenantId: TenantId, callId: string): Promise<CallCommandResult>;
  unhold(tenantId: TenantId, callId: string): Promise<CallCommandResult>;
  /**
   * Queues digits toward the remote party (docs/API.md "Digits toward the callee"): RFC 4733,
   * tones or SIP INFO as the carrier leg allows; answers once queued.
   */
  sendDigits(tenantId: TenantId, callId: string, digits: string): Promise<CallCommandResult>;
  /** CANCEL or BYE as the state requires; the record once ended. */
  hangup(tenantId: TenantId, callId: string): Promise<CallCommandResult>;
  /** Blind transfer of the remote party to `to` over the call's carrier. */
  transfer(tenantId: TenantId, callControlId: string, to: string): Promise<CallCommandResult>;
  /**
   * The live media state of a call of that tenant, or null (ended, or no engine reached). The
   * engine answers at once; an API process asks the engine that owns the call (docs/ARCHITECTURE.md
   * "Process roles"), hence the promise.
   */
  sessionOf(tenantId: TenantId, callId: string): CallSessionSnapshot | null | Promise<CallSessionSnapshot | null>;
  /** Carrier names a tenant may place calls over (the built-in `sandbox` included). */
  carrierNames(): readonly string[] | Promise<readonly string[]>;
}

export const isCallFailure = (r: CallCommandResult): r is CallCommandFailure => 'error' in r;
