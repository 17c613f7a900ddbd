/**
 * @module An in-memory CallControl for tests of the API's rules only: it keeps its records in the
 * store's calls repository (so the read endpoints see them), counts place() calls, and can be told
 * to fail the next command or to hold place() until released. The real engine is tested end to end
 * elsewhere.
 */
import type { Clock } from '../../src/common/clock.js';
import { newCallControlId, newCallId, type TenantId } from '../../src/common/ids.js';
import { isoNow } from '../../src/common/time.js';
import type {
  CallCommandFailure, CallCommandResult, CallControl, PlaceCallRequest,
} from '../../src/engine/calls/call-control.js';
import type { CallSessionSnapshot } from '../../src/engine/calls/session-snapshot.js';
import type { CallRecord, CallRepository } from '../../src/storage/index.js';

export class FakeCallControl implements CallControl {
  readonly #calls: Pick<CallRepository, 'insert' | 'save' | 'get' | 'getByControlId'>;
  readonly #clock: Clock;
  readonly #carriers: readonly string[];
  #failNext: CallCommandFailure | undefined;
  #gate: Promise<void> | undefined;
  /** Every request place() was given, in order. */
  readonly placed: PlaceCallRequest[] = [];

  constructor(calls: Pick<CallRepository, 'insert' | 'save' | 'get' | 'getByControlId'>, clock: Clock, carriers: readonly string[] = ['sandbox', 'telnyx']) {
    this.#calls = calls;
    this.#clock = clock;
    this.#carriers = carriers;
  }

  /** The next command (whichever it is) answers with this failure and changes nothing. */
  failNext(failure: CallCommandFailure): void {
    this.#failNext = failure;
  }

  /** place() waits until the returned function is called (to hold a request in flight). */
  holdPlacement(): () => void {
    let release!: () => void;
    this.#gate = new Promise<void>((resolve) => { release = resolve; });
    return () => { this.#gate = undefined; release(); };
  }

  #takeFailure(): CallCommandFailure | undefined {
    const failure = this.#failNext;
    this.#failNext = undefined;
    return failure;
  }

  async place(request: PlaceCallRequest): Promise<CallCommandResult> {
    this.placed.push(request);
    if (this.#gate) await this.#gate;
    const failure = this.#takeFailure();
    if (failure) return failure;
    const call: CallRecord = {
      id: newCallId(), tenant_id: request.tenantId, call_control_id: newCallControlId(), direction: 'outbound', state: 'initiated',
      on_hold: false, from_number: request.from, to_number: request.to, carrier: request.carrier, record: request.record,
      agent_type: request.agentId ? 'imported' : 'websocket', agent_url: request.agentUrl ?? null, agent_id: request.agentId ?? null, created_at: isoNow(this.#clock), ringing_at: null,
      answered_at: null, ended_at: null, end_reason: null, sip_status: null, hangup_by: null, transfer_to: null,
      transfer_state: null, transfer_started_at: null, conversation_id: null, recording_path: null, caller_privacy: false, quality: null,
      caller_verstat: null, caller_identity_header: false, sip_headers: null, amd_result: null, amd_decided_after_ms: null, amd_beep_at_ms: null,
    };
    await this.#calls.insert(call);
    return { call };
  }

  async #change(call: CallRecord | undefined, allowed: (c: CallRecord) => boolean, apply: (c: CallRecord) => CallRecord): Promise<CallCommandResult> {
    const failure = this.#takeFailure();
    if (failure) return failure;
    if (!call) return { error: 'not_found' };
    if (!allowed(call)) return { error: 'call_not_active' };
    const changed = apply(call);
    await this.#calls.save(changed);
    return { call: changed };
  }

  async hold(tenantId: TenantId, callId: string): Promise<CallCommandResult> {
    return (this.#change(await this.#calls.get(tenantId, callId), (c) => c.state === 'active', (c) => ({ ...c, on_hold: true })));
  }

  async unhold(tenantId: TenantId, callId: string): Promise<CallCommandResult> {
    return (this.#change(await this.#calls.get(tenantId, callId), (c) => c.state === 'active', (c) => ({ ...c, on_hold: false })));
  }

  /** Digits asked for by the API, per call id. */
  readonly digits: { callId: string; digits: string }[] = [];

  async sendDigits(tenantId: TenantId, callId: string, digits: string): Promise<CallCommandResult> {
    const result = await this.#change(await this.#calls.get(tenantId, callId), (c) => c.state === 'active', (c) => c);
    if ('call' in result) this.digits.push({ callId, digits });
    return result;
  }

  async hangup(tenantId: TenantId, callId: string): Promise<CallCommandResult> {
    const now = isoNow(this.#clock);
    return (this.#change(await this.#calls.get(tenantId, callId), (c) => c.state !== 'ended', (c) => ({
      ...c, state: 'ended', on_hold: false, ended_at: now, end_reason: c.state === 'active' ? 'completed' : 'cancelled', hangup_by: 'api',
    })));
  }

  async transfer(tenantId: TenantId, callControlId: string, to: string): Promise<CallCommandResult> {
    const now = isoNow(this.#clock);
    return (this.#change(await this.#calls.getByControlId(tenantId, callControlId), (c) => c.state === 'active', (c) => ({
      ...c, transfer_to: to, transfer_state: 'dialing', transfer_started_at: now,
    })));
  }

  /** A call before its answer, as the engine reports one (the fake has no media: port 0). */
  async sessionOf(tenantId: TenantId, callId: string): Promise<CallSessionSnapshot | null> {
    const call = await this.#calls.get(tenantId, callId);
    return call && call.state !== 'ended' ? { phase: 'setup', local_rtp_port: 0 } : null;
  }

  carrierNames(): readonly string[] {
    return this.#carriers;
  }
}
