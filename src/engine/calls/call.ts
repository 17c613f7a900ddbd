/**
 * @module One call's record and its life (docs/API.md "Calls"): state changes through the state
 * machine, hold, transfer trail and the end, each written to the store as it happens. The call
 * flows own the SIP and media legs; this class owns what the tenant sees.
 */
import type { Clock } from '../../common/clock.js';
import { newCallControlId, newCallId, type TenantId } from '../../common/ids.js';
import type { Logger } from '../../common/logger.js';
import { isoNow } from '../../common/time.js';
import type { MachineDetection } from './call-control.js';
import type { CallDirection, CallRecord } from './call-record.js';
import { nextCallState, type CallEvent, type CallState } from './call-state.js';
import type { EndReason } from './ending/end-reason.js';
import type { SessionDialog } from '../sip/index.js';
import type { CallLegName, CallOutcome, CallRecordStore, CallSipTrace, DialogSnapshots, SnapshotLeg } from './ports.js';
import type { CallQuality } from './quality/call-quality.js';

export interface NewCall {
  tenantId: TenantId;
  direction: CallDirection;
  from: string;
  to: string;
  carrier: string;
  record: boolean;
  /** Inbound: the caller asked for privacy (see caller-identity.ts); false when absent. */
  callerPrivacy?: boolean;
  /** Inbound: what the carrier said of the caller's STIR/SHAKEN verification (see caller-identity.ts). */
  verification?: { verstat: string | null; identityHeader: boolean };
  /** Inbound: the carrier's headers carried through (see carried-headers.ts); none when absent. */
  sipHeaders?: Record<string, string> | null;
  /** Outbound: the tenant's `custom_parameters`, given to a WebSocket agent in `start.customParameters`. */
  customParameters?: Record<string, string>;
  /** Outbound: answering-machine detection asked for (docs/API.md "Answering-machine detection"); `off` when absent. */
  machineDetection?: MachineDetection;
  /** With `hold_until_result`: what a machine gets (`hangup` when absent), and whether it is connected after its beep. */
  onMachine?: 'hangup' | 'connect';
  waitForBeep?: boolean;
  agent: { type: 'websocket'; url: string } | { type: 'imported'; agentId: string };
}

export interface CallContext {
  clock: Clock;
  store: CallRecordStore;
  logger: Logger;
  /** Where the call's SIP messages are kept; none when absent. */
  sipTrace?: CallSipTrace;
  /** Where confirmed dialogs' snapshots go for another engine to end them (a cluster); none when absent. */
  dialogSnapshots?: DialogSnapshots;
}

/** The record of one live call; ended calls keep their last record and refuse further changes. */
export class Call {
  readonly #record: CallRecord;
  readonly #ctx: CallContext;
  readonly #onEnd: ((call: Call) => void)[] = [];
  readonly log: Logger;
  /** Answering-machine detection asked for when the call was placed. */
  readonly machineDetection: MachineDetection;
  /** What `hold_until_result` does with a machine (docs/API.md "Answering-machine detection"). */
  readonly onMachine: { action: 'hangup' | 'connect'; waitForBeep: boolean };
  /** The tenant's `custom_parameters` of an outbound call (docs/API.md "Calls"); empty when none. */
  readonly customParameters: Readonly<Record<string, string>>;
  #finished = false;

  constructor(init: NewCall, ctx: CallContext) {
    this.#ctx = ctx;
    this.machineDetection = init.machineDetection ?? 'off';
    this.onMachine = { action: init.onMachine ?? 'hangup', waitForBeep: init.waitForBeep ?? false };
    this.customParameters = init.customParameters ?? {};
    this.#record = {
      id: newCallId(), tenant_id: init.tenantId, call_control_id: newCallControlId(), direction: init.direction,
      state: 'initiated', on_hold: false, from_number: init.from, caller_privacy: init.callerPrivacy ?? false,
      caller_verstat: init.verification?.verstat ?? null, caller_identity_header: init.verification?.identityHeader ?? false,
      sip_headers: init.sipHeaders ?? null,
      amd_result: null, amd_decided_after_ms: null, amd_beep_at_ms: null, to_number: init.to, carrier: init.carrier,
      record: init.record, agent_type: init.agent.type, agent_url: init.agent.type === 'websocket' ? init.agent.url : null,
      agent_id: init.agent.type === 'imported' ? init.agent.agentId : null, created_at: isoNow(ctx.clock),
      ringing_at: null, answered_at: null, ended_at: null, end_reason: null, sip_status: null, hangup_by: null,
      transfer_to: null, transfer_state: null, transfer_started_at: null, conversation_id: null, recording_path: null, quality: null,
    };
    this.log = ctx.logger.child({ call_id: this.#record.id, tenant_id: init.tenantId });
  }

  /**
   * A new call, once its first record is stored; rejects when the store refuses it (the call is
   * then not placed or not taken). The only write of a call that is waited for.
   */
  static async open(init: NewCall, ctx: CallContext): Promise<Call> {
    const call = new Call(init, ctx);
    await ctx.store.insert(call.#record);
    return call;
  }

  get id(): string {
    return this.#record.id;
  }

  get tenantId(): TenantId {
    return this.#record.tenant_id;
  }

  get isEnded(): boolean {
    return this.#record.state === 'ended';
  }

  /** A copy of the record as the API presents it. */
  snapshot(): CallRecord {
    return { ...this.#record };
  }

  /**
   * Applies `ringing` or `answered`. A repeated 18x, or signalling that arrives after the end,
   * changes nothing; an illegal event (an 18x or a second answer after the answer) throws
   * IllegalTransitionError.
   */
  advance(event: Exclude<CallEvent, 'ended'>): void {
    if (!this.#transition(event)) return;
    if (this.#record.state === 'active') this.log.info({ direction: this.#record.direction, carrier: this.#record.carrier }, 'call answered');
    this.#save();
  }

  setHold(onHold: boolean): void {
    if (this.isEnded || this.#record.on_hold === onHold) return;
    this.#record.on_hold = onHold;
    this.log.info(onHold ? 'call held' : 'call taken off hold');
    this.#save();
  }

  setTransfer(to: string, state: 'dialing' | 'connected' | 'failed'): void {
    if (this.isEnded) return;
    if (state === 'dialing') {
      this.#record.transfer_to = to;
      this.#record.transfer_started_at = isoNow(this.#ctx.clock);
    }
    this.#record.transfer_state = state;
    // One line per step: dialing, then connected or failed (docs/API.md "Calls").
    this.log.info({ transfer_to: to, transfer_state: state }, `transfer ${state}`);
    this.#save();
  }

  /** The answering-machine detection result; the first decision stands, a later beep only dates itself. */
  setAmd(amd: { result: 'human' | 'machine' | 'fax' | 'unknown'; decidedAfterMs: number; beepAtMs: number | null }): void {
    if (this.isEnded) return;
    if (this.#record.amd_result === null) {
      this.#record.amd_result = amd.result;
      this.#record.amd_decided_after_ms = amd.decidedAfterMs;
    }
    this.#record.amd_beep_at_ms = amd.beepAtMs;
    this.#save();
  }

  setConversationId(id: string): void {
    if (this.isEnded || this.#record.conversation_id !== null) return;
    this.#record.conversation_id = id;
    this.#save();
  }

  /** A key the remote party pressed (docs/EVENTS.md `call.dtmf`). */
  pressed(digit: string): void {
    if (!this.isEnded) this.#ctx.store.note(this.#record, { type: 'call.dtmf', digit });
  }

  /** A WebSocket agent's link is up (docs/EVENTS.md `call.agent.connected`). */
  agentConnected(): void {
    if (!this.isEnded) this.#ctx.store.note(this.#record, { type: 'call.agent.connected' });
  }

  /** The recording's path relative to the data folder, once it is complete (written with the final record). */
  setRecordingPath(path: string): void {
    this.#record.recording_path = path;
    if (!this.isEnded) this.#save();
  }

  /** The media figures of the call's legs, kept in memory and written with the final record (docs/API.md "Call quality"). */
  setQuality(quality: CallQuality): void {
    if (!this.#finished) this.#record.quality = quality;
  }

  /** A SIP dialog (or attempt) of the call: its messages, by Call-ID, go to the call's SIP trace. */
  traceSip(sipCallId: string, leg: CallLegName): void {
    try {
      this.#ctx.sipTrace?.attach({ tenantId: this.#record.tenant_id, id: this.#record.id }, sipCallId, leg);
    } catch (err) {
      this.log.warn({ err }, 'cannot attach a SIP dialog to the call trace');
    }
  }

  /**
   * A leg's dialog is confirmed: its snapshot is stored, for another engine to BYE it should this
   * one die, and stored again when a target refresh moves the far end's Contact.
   */
  snapshotDialog(leg: SnapshotLeg, session: SessionDialog): void {
    const snapshots = this.#ctx.dialogSnapshots;
    if (!snapshots) return;
    const store = (): void => {
      if (this.isEnded) return;
      try {
        snapshots.store(this.#record.id, leg, session.snapshot());
      } catch (err) {
        this.log.warn({ err, leg }, 'cannot store a dialog snapshot');
      }
    };
    session.dialog.onTargetRefresh = store;
    store();
  }

  /** Ends the call at once: the final record is written now (a call that never connected has nothing more to finish). */
  end(reason: EndReason): boolean {
    if (!this.markEnded(reason)) return false;
    this.finish([]);
    return true;
  }

  /**
   * Ends the call in memory: commands are refused from now on, but nothing is written yet. The
   * first reason is the true one; later ends are ignored. {@link finish} writes the final record
   * once the recording and transcripts are complete, so a call read as `ended` has them.
   */
  markEnded(reason: EndReason): boolean {
    if (this.isEnded) return false;
    this.#transition('ended', reason);
    this.log.info({ end_reason: reason.reason, sip_status: reason.sipStatus, hangup_by: reason.hangupBy }, 'call ended');
    return true;
  }

  /**
   * The one method that changes the call's state (call-state.ts has the diagram): applies the pure
   * next-state function, which throws on an illegal event, and stamps what the new state records.
   * Returns false for "stay" (nothing to write). The caller writes the record.
   */
  #transition(event: CallEvent, reason?: EndReason): boolean {
    const from = this.#record.state;
    const to: CallState = nextCallState(from, event);
    if (to === from) return false;
    this.#record.state = to;
    switch (to) {
      case 'initiated':
        break;
      case 'ringing':
        this.#record.ringing_at = isoNow(this.#ctx.clock);
        break;
      case 'active':
        this.#record.answered_at = isoNow(this.#ctx.clock);
        break;
      case 'ended':
        Object.assign(this.#record, {
          on_hold: false, ended_at: isoNow(this.#ctx.clock),
          end_reason: reason?.reason ?? null, sip_status: reason?.sipStatus ?? null, hangup_by: reason?.hangupBy ?? null,
        });
        // A transfer still dialling when the call ends did not connect.
        if (this.#record.transfer_state === 'dialing') this.#record.transfer_state = 'failed';
        break;
    }
    return true;
  }

  /**
   * Writes the final record with the call's transcripts (the store keeps it in the CDR journal
   * when the database refuses it, and never throws), then tells the listeners: the registry frees
   * the call's concurrency slot whatever the database did.
   */
  finish(transcripts: CallOutcome['transcripts']): void {
    if (!this.isEnded || this.#finished) return;
    this.#finished = true;
    this.#ctx.store.finish({ call: { ...this.#record }, transcripts });
    try {
      this.#ctx.sipTrace?.finish({ tenantId: this.#record.tenant_id, id: this.#record.id });
    } catch (err) {
      this.log.warn({ err }, 'cannot close the call\'s SIP trace');
    }
    for (const listener of this.#onEnd.splice(0)) listener(this);
  }

  /** Called once the call is finished (its final record written or journaled). */
  onEnd(listener: (call: Call) => void): void {
    if (this.#finished) listener(this);
    else this.#onEnd.push(listener);
  }

  #save(): void {
    this.#ctx.store.save(this.#record);
  }
}
