/**
 * @module What the call layer needs from layers it may not import: the agent's streaming session
 * (satisfied structurally by the providers' AgentSession) and the call store (satisfied by the
 * storage repositories). Wired in gateway.ts.
 */
import type { TenantId } from '../../common/ids.js';
import type { MediaEncryption } from '../media/index.js';
import type { DialogSnapshot } from '../sip/index.js';
import type { CallRecord } from './call-record.js';
import type { TransferPolicy } from './connected/transfer-policy.js';

/** Wire format of agent audio: G.711 µ-law bytes, or 16-bit signed little-endian PCM, mono. */
export interface AgentAudioFormat {
  readonly encoding: 'mulaw' | 'pcm16';
  readonly sampleRate: number;
}

/** The call as the agent is told about it. */
export interface AgentCallInfo {
  callId: string;
  callControlId: string;
  from: string;
  to: string;
  direction: 'inbound' | 'outbound';
  /** Inbound: the carrier's STIR/SHAKEN report (docs/API.md "Caller verification"). */
  verification?: { verstat: string | null; identityHeader: boolean };
  /** Inbound: the carrier's headers carried through, in `start.customParameters.sip_headers` (docs/API.md "SIP headers carried through"). */
  sipHeaders?: Readonly<Record<string, string>>;
  /** Outbound: the tenant's `custom_parameters`, in `start.customParameters` (docs/API.md "Calls"). */
  customParameters?: Readonly<Record<string, string>>;
}

/** How an agent link ended: the agent hung up, the gateway closed it, or it failed. */
export interface AgentLinkClose {
  by: 'agent' | 'gateway' | 'error';
  code: number;
  reason: string;
}

/** What an agent link reports; called synchronously, must not throw. */
export interface AgentLinkHandlers {
  /** Agent audio in the link's `outputFormat`, any chunk size. */
  onAudio?(frame: Buffer): void;
  /** Barge-in: drop queued agent audio now. */
  onClearAudio?(): void;
  /** A mark after the audio given so far: answer with `markPlayed` once that audio has played. */
  onMark?(name: string): void;
  onTranscript?(transcript: { role: 'caller' | 'agent'; text: string; final: boolean }): void;
  onConversationId?(id: string): void;
  onClose?(info: AgentLinkClose): void;
  /** The agent asked for digits toward the remote party (docs/API.md "Digits toward the callee"). */
  onSendDigits?(digits: string): void;
  /** The agent asked for the remote party to be transferred to `to` (docs/API.md "Transfers asked by the agent"), not yet screened. */
  onTransfer?(to: string): void;
  /** The agent asked for the call to end (`hangup_by: agent`). */
  onHangup?(): void;
}

/** Who put a call on hold: the tenant through the API, or the remote party with a re-offer. */
export type HoldSource = 'api' | 'remote';

/**
 * One live streaming conversation with an agent (the providers' AgentSession has this shape).
 * `start()` rejects when the agent cannot be reached or refuses; the link is then closed.
 */
export interface AgentLink {
  readonly inputFormat: AgentAudioFormat;
  readonly outputFormat: AgentAudioFormat;
  start(): Promise<void>;
  /** Caller audio, 20 ms in `inputFormat`. */
  sendAudio(frame: Buffer): void;
  /** Caller frames the link dropped because the agent stopped reading them. */
  readonly audioFramesDropped?: number;
  /** An RFC 4733 digit; false when the protocol cannot carry it. */
  sendDtmf(digit: string): boolean;
  /** The call went on hold (`api`: POST /v1/calls/{id}/hold; `remote`: the remote party's own hold, RFC 3264 §8.4). */
  hold(source?: HoldSource): void;
  unhold(source?: HoldSource): void;
  markPlayed(name: string): void;
  /** An extension event of the gateway's own protocol (`dtmf_sent`, `amd`); links without one ignore it. */
  notify?(event: string, body: Record<string, unknown>): void;
  close(reason: string): void;
  /**
   * Who stops the agent's audio when the caller talks over it. 'platform' (the default): the
   * provider detects it and sends a clear (`onClearAudio`). 'client': the provider expects the
   * gateway to detect the caller's speech, drop the queued audio itself and call {@link interrupt}.
   */
  readonly bargeIn?: 'client' | 'platform';
  /** With `bargeIn: 'client'`: the caller started speaking over the agent, whose queued audio was dropped. */
  interrupt?(): void;
}

/** Which agent a call connects to. */
export type AgentTarget =
  | { kind: 'websocket'; url: string }
  | { kind: 'imported'; agentId: string };

/** Opens (but does not start) the link to a call's agent; asynchronously when an imported agent is read from the store first. */
export type AgentConnector = (request: { call: AgentCallInfo; tenantId: TenantId; agent: AgentTarget; handlers: AgentLinkHandlers }) => AgentLink | Promise<AgentLink>;

/**
 * What happens to a call that its record does not keep (docs/EVENTS.md "Event types"): a key the
 * remote party pressed, or a WebSocket agent connected (an imported agent's connection shows on
 * the record as its platform's conversation id).
 */
export type CallHappening = { type: 'call.dtmf'; digit: string } | { type: 'call.agent.connected' };

/** A call's final record and the transcripts stored with it: what `ended` means in the API. */
export interface CallOutcome {
  call: CallRecord;
  transcripts: { source: 'provider' | 'gateway'; turns: { role: 'caller' | 'agent'; text: string; offset_s: number }[] }[];
}

/**
 * Where calls are persisted: written at each state change, never per packet. Only `insert` is
 * waited for, and may reject (storage unavailable: the call is refused); a change or a final
 * record is queued and returns at once, and one the storage refuses is kept and written later
 * (docs/RELIABILITY.md, storage failures), so ending a call never fails and never waits.
 */
export interface CallRecordStore {
  insert(call: CallRecord): Promise<void>;
  /** A change of a live call (state, hold, transfer, conversation id). */
  save(call: CallRecord): void;
  /** Something that happened to a live call without changing its record: told as an event, in order with its changes. */
  note(call: CallRecord, happening: CallHappening): void;
  /** The call's final record (state `ended`) with its transcripts, in one write. */
  finish(outcome: CallOutcome): void;
  get(tenantId: TenantId, id: string): Promise<CallRecord | undefined>;
  getByControlId(tenantId: TenantId, callControlId: string): Promise<CallRecord | undefined>;
  /**
   * Calls a crash left unfinished, every tenant's (not those whose final record waits to be
   * written); with a node id, only that engine's and those that name no node.
   */
  unfinished(nodeId?: string): Promise<CallRecord[]>;
}

/** Which leg of a call a SIP dialog is: the carrier's, a sip_trunk agent edge's, or a bridge transfer's target. */
export type CallLegName = 'carrier' | 'agent' | 'transfer_target';

/**
 * Where a call's SIP messages are kept (docs/API.md "SIP trace of a call"): told the SIP Call-ID
 * of each leg as it is known, and when the call is over. Must not throw.
 */
export interface CallSipTrace {
  attach(call: { tenantId: TenantId; id: string }, sipCallId: string, leg: CallLegName): void;
  finish(call: { tenantId: TenantId; id: string }): void;
}

/** The legs of a call whose dialogs another engine ends if this one dies: the carrier's and a sip_trunk agent edge's. */
export type SnapshotLeg = Extract<CallLegName, 'carrier' | 'agent'>;

/**
 * Where the engine carrying a call keeps the snapshot of each confirmed dialog of the call
 * (docs/ARCHITECTURE.md "Process roles"), so that another engine can end it with BYE if this one
 * dies. A later snapshot of the same leg replaces the earlier. Not awaited; must not throw.
 */
export interface DialogSnapshots {
  store(callId: string, leg: SnapshotLeg, snapshot: DialogSnapshot): void;
}

/** What the caller-ID policy reads of a tenant's numbers (docs/API.md "Caller IDs"). */
export interface CallerIdDirectory {
  /** The tenant holds the number on that carrier now. */
  holds(tenantId: TenantId, phoneNumber: string, carrier: string): Promise<boolean>;
  /** The operator verified the number for the tenant (`vgw caller-id add`). */
  isVerified(tenantId: TenantId, phoneNumber: string): Promise<boolean>;
}

/** Where an inbound call to a DID goes: the route's tenant and the imported agent, in its mode. */
export interface InboundRoute {
  tenantId: TenantId;
  agentId: string;
  connectionMode: 'sip_trunk' | 'media_bridge';
}

/** A sip_trunk agent's SIP target for one call: URI, digest credentials, and the headers its platform documents. */
export interface SipTrunkTarget {
  uri: string;
  /** The agent's platform, for the connect metrics. */
  provider?: string;
  /** SRTP on the leg to the edge (the operator's `providers.<name>.media_encryption`); plain RTP when absent. */
  mediaEncryption?: MediaEncryption;
  credentials?: { username: string; password: string; realm?: string };
  headers?: readonly (readonly [string, string])[];
  /** The transfers the agent may ask for by REFER on its leg; none when absent. */
  transferPolicy?: TransferPolicy;
}

/**
 * Resolves a sip_trunk agent's target at call time (some platforms first register the call over
 * HTTPS, Retell's `register-phone-call`). A failure is a value: the caller gets 503.
 */
export type SipTrunkResolver = (request: { tenantId: TenantId; agentId: string; call: AgentCallInfo }) => Promise<SipTrunkTarget | { error: string; provider?: string }>;

/**
 * Told how an agent connection ended, by provider (docs/API.md "Operational endpoints"): connected
 * after `seconds` (a streaming session started, a sip_trunk edge answered), or failed: `unreachable`,
 * `rejected`, `protocol` or `other`.
 */
export type AgentConnectObserver = (provider: string, outcome: { connected: true; seconds: number } | { connected: false; reason: string }) => void;

/** Which party of a call a recognition stream hears: the remote party on the phone, or the agent. */
export type SpeakerRole = 'caller' | 'agent';

/** One final result of a recognition stream, timed in the audio given to its `write()` (hold excluded). */
export interface RecognizedUtterance {
  text: string;
  startMs: number;
  endMs: number;
}

/** What a recognition stream reports as it goes; called synchronously, must not throw. */
export interface RecognitionHandlers {
  /** A provisional hypothesis that a later partial or final replaces (streaming cloud engines). */
  onPartial?(text: string): void;
  onFinal?(utterance: RecognizedUtterance): void;
  /** The engine failed; the stream writes nothing more, keeps what it heard, and the call goes on. */
  onError?(message: string): void;
}

/** What {@link SpeechRecognizer.open} is told: whose voice, in which call, at which rate `write()` is fed. */
export interface RecognitionRequest {
  callId: string;
  role: SpeakerRole;
  sampleRate: number;
  handlers?: RecognitionHandlers;
}

/**
 * One party's speech in one call. `write()` takes mono PCM16 at the requested rate, and the
 * caller may reuse the array once it returns. `pause()` marks an intended gap (hold): an engine
 * ends the utterance in progress and may keep its connection alive meanwhile.
 */
export interface RecognitionStream {
  write(pcm: Int16Array): void;
  pause(): void;
  resume(): void;
  /** Ends the stream: every final utterance it produced, in order. Never rejects; bounded in time. */
  close(): Promise<RecognizedUtterance[]>;
}

/**
 * A speech recognition engine the gateway runs on call audio itself (a local process, or a
 * cloud streaming service). Opening never throws for an engine failure: the stream reports it
 * through `onError` and yields what it heard.
 */
export interface SpeechRecognizer {
  /** The engine's name for logs and `session` (e.g. `pocketsphinx`). */
  readonly name: string;
  /** The rate the engine wants; the call layer resamples its 8 kHz audio to it. */
  readonly sampleRate: 8000 | 16000 | 24000 | 48000;
  open(request: RecognitionRequest): RecognitionStream;
}

/** What the cluster-wide admission answers: room for the call, or which limit is reached across every engine. */
export type ClusterAdmissionOutcome = { ok: true } | { ok: false; scope: 'tenant' | 'carrier' };

/**
 * The concurrency limits across every engine of a cluster (docs/CLUSTER.md "Live state in
 * Redis"), asked after an engine's own checks and before media is opened; absent on a single
 * process. `admit` never rejects: while the shared state is away the implementation decides
 * (it admits on the engine's local limits). `update` and `release` return at once and never throw.
 */
export interface ClusterAdmission {
  admit(call: CallRecord, limits: { tenantLimit: number; carrierLimit: number }): Promise<ClusterAdmissionOutcome>;
  /** The call's record changed (state, hold, transfer): its live list entry follows. */
  update(call: CallRecord): void;
  /** The call ended, or was never placed after all: its place is free. */
  release(callId: string): void;
}
