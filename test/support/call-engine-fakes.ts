/**
 * @module The fakes of the call-layer unit tests: the call store as a map, and an agent connector
 * whose links record what the call layer asked of them. Built by call-engine-rig.ts.
 */
import type { TenantId } from '../../src/common/ids.js';
import type {
  AgentAudioFormat, AgentConnector, AgentLink, AgentLinkHandlers, AgentTarget, CallHappening, CallOutcome, CallRecordStore, HoldSource,
} from '../../src/engine/calls/ports.js';
import type { CallRecord } from '../../src/engine/calls/call-record.js';

/** The call store as a map: every record written, and the final outcomes in order. */
export class MemoryCallStore implements CallRecordStore {
  readonly records = new Map<string, CallRecord>();
  readonly finished: CallOutcome[] = [];
  /** Each `save` in order (a copy), to check what the tenant saw change. */
  readonly saves: CallRecord[] = [];
  /** Each `note`, with its call's id. */
  readonly notes: (CallHappening & { callId: string })[] = [];
  refuseInserts = false;

  insert(call: CallRecord): Promise<void> {
    if (this.refuseInserts) return Promise.reject(new Error('storage unavailable'));
    this.records.set(call.id, { ...call });
    return Promise.resolve();
  }

  save(call: CallRecord): void {
    this.records.set(call.id, { ...call });
    this.saves.push({ ...call });
  }

  note(call: CallRecord, happening: CallHappening): void {
    this.notes.push({ callId: call.id, ...happening });
  }

  finish(outcome: CallOutcome): void {
    this.records.set(outcome.call.id, { ...outcome.call });
    this.finished.push(outcome);
  }

  get(tenantId: TenantId, id: string): Promise<CallRecord | undefined> {
    const r = this.records.get(id);
    return Promise.resolve(r?.tenant_id === tenantId ? r : undefined);
  }

  getByControlId(tenantId: TenantId, callControlId: string): Promise<CallRecord | undefined> {
    return Promise.resolve([...this.records.values()].find((r) => r.tenant_id === tenantId && r.call_control_id === callControlId));
  }

  unfinished(): Promise<CallRecord[]> {
    return Promise.resolve([...this.records.values()].filter((r) => r.state !== 'ended'));
  }

  /** The final record of a call, once written. */
  final(id: string): CallRecord | undefined {
    return this.finished.find((o) => o.call.id === id)?.call;
  }
}

const MULAW_8K: AgentAudioFormat = { encoding: 'mulaw', sampleRate: 8000 };

/** One agent conversation as the fake connector opened it: what the call layer asked of it. */
export class FakeAgentLink implements AgentLink {
  readonly inputFormat = MULAW_8K;
  readonly outputFormat = MULAW_8K;
  readonly request: { call: { callId: string; from: string; to: string; direction: string; verification?: { verstat: string | null; identityHeader: boolean } }; agent: AgentTarget; tenantId: TenantId };
  readonly handlers: AgentLinkHandlers;
  readonly audio: Buffer[] = [];
  readonly holdEvents: string[] = [];
  readonly dtmf: string[] = [];
  closedWith: string | null = null;
  started = false;
  readonly #refuse: boolean;

  constructor(request: FakeAgentLink['request'], handlers: AgentLinkHandlers, refuse: boolean) {
    this.request = request;
    this.handlers = handlers;
    this.#refuse = refuse;
  }

  start(): Promise<void> {
    if (this.#refuse) return Promise.reject(new Error('agent refused the connection'));
    this.started = true;
    return Promise.resolve();
  }

  sendAudio(frame: Buffer): void {
    this.audio.push(frame);
  }

  sendDtmf(digit: string): boolean {
    this.dtmf.push(digit);
    return true;
  }

  hold(source: HoldSource = 'api'): void {
    this.holdEvents.push(`hold:${source}`);
  }

  unhold(source: HoldSource = 'api'): void {
    this.holdEvents.push(`unhold:${source}`);
  }

  markPlayed(): void {}

  close(reason: string): void {
    this.closedWith ??= reason;
  }

  /** The agent hangs up on its own (the platform closed the conversation). */
  hangUp(): void {
    this.handlers.onClose?.({ by: 'agent', code: 1000, reason: 'bye' });
  }
}

/** The fake agent connector: every link it opened, in order; `refuse` makes the next ones fail to start. */
export class FakeAgents {
  readonly links: FakeAgentLink[] = [];
  refuse = false;
  readonly connect: AgentConnector = ({ call, tenantId, agent, handlers }) => {
    const link = new FakeAgentLink({ call, agent, tenantId }, handlers, this.refuse);
    this.links.push(link);
    return link;
  };
}
