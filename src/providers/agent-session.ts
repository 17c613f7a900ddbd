/** @module The AgentSession contract: one live streaming conversation between a call and an agent. */
import type { LookupFunction } from 'node:net';
import type { Clock } from '../common/clock.js';
import type { HoldSource } from '../engine/calls/ports.js';

export type { HoldSource };

/**
 * Wire encoding of agent audio. `mulaw`: G.711 µ-law bytes (ITU-T G.711), one byte per sample.
 * `pcm16`: 16-bit signed little-endian linear PCM, mono.
 */
export type AudioEncoding = 'mulaw' | 'pcm16';

/** The format an adapter takes caller audio in, or gives agent audio out in. */
export interface AudioFormat {
  readonly encoding: AudioEncoding;
  readonly sampleRate: number;
}

export const MULAW_8000: AudioFormat = Object.freeze({ encoding: 'mulaw', sampleRate: 8000 });
export const PCM16_16000: AudioFormat = Object.freeze({ encoding: 'pcm16', sampleRate: 16000 });

/** Bytes in `ms` milliseconds of audio in `format`. */
export function bytesPerMs(format: AudioFormat, ms = 1): number {
  return ((format.encoding === 'mulaw' ? 1 : 2) * format.sampleRate * ms) / 1000;
}

/** The call this session serves, as the agent is told about it. */
export interface AgentCallInfo {
  callId: string;
  callControlId: string;
  /** Caller, E.164 or SIP user. */
  from: string;
  /** Called party, E.164 or SIP user. */
  to: string;
  direction: 'inbound' | 'outbound';
  /** Inbound: the carrier's STIR/SHAKEN report, passed in `start.customParameters` (docs/API.md "Caller verification"). */
  verification?: { verstat: string | null; identityHeader: boolean };
  /** Inbound: the carrier's headers carried through, in `start.customParameters.sip_headers` (docs/API.md "SIP headers carried through"). */
  sipHeaders?: Readonly<Record<string, string>>;
  /** Outbound: the tenant's `custom_parameters`, in `start.customParameters` (docs/API.md "Calls"). */
  customParameters?: Readonly<Record<string, string>>;
}

/** Where the agent is. */
export interface AgentEndpoint {
  /**
   * The agent's streaming URL. `ws(s)://` is connected to directly; `http(s)://` is the platform's
   * call-creation endpoint whose answer carries the per-call socket URL (Vapi).
   */
  url: string;
  /** The platform's id for the agent (ElevenLabs agent id, Vapi assistant id, OpenAI model). */
  externalAgentId: string;
  /** HTTPS base of the platform's REST API; derived from `url`'s host when absent. */
  apiBaseUrl?: string;
}

/** Severity of a {@link AgentSessionLog} line. */
export type AgentLogLevel = 'debug' | 'info' | 'warn';

/**
 * Log sink for session events. Adapters never pass keys, tokens or signed URLs to it, so the
 * caller may forward lines as they are.
 */
export type AgentSessionLog = (level: AgentLogLevel, message: string, fields?: Record<string, string | number | boolean>) => void;

/** One piece of conversation text. `final` false marks a partial that a later piece replaces. */
export interface AgentTranscript {
  role: 'caller' | 'agent';
  text: string;
  final: boolean;
}

/**
 * Why a session ended. `agent`: the agent hung up (closed normally); `gateway`: {@link
 * AgentSession.close} was called; `error`: the socket failed or the platform closed it with an
 * error code. `code` is the WebSocket close code (RFC 6455 §7.4) when there was one, else 1006.
 */
export interface AgentCloseInfo {
  by: 'agent' | 'gateway' | 'error';
  code: number;
  reason: string;
}

/**
 * What a session reports. Every handler is optional and called synchronously from the socket's
 * event loop turn; handlers must not throw.
 */
export interface AgentSessionHandlers {
  /** Agent audio in {@link AgentSession.outputFormat}; chunk size is the platform's. */
  onAudio?(frame: Buffer): void;
  /**
   * Barge-in: drop every queued agent frame now. Marks queued among the dropped audio count as
   * played: the gateway echoes them through {@link AgentSession.markPlayed} (Twilio does the same).
   */
  onClearAudio?(): void;
  /**
   * The agent placed a mark after the audio given so far. When the audio queued before it has
   * played (or been cleared), the gateway calls {@link AgentSession.markPlayed} with the name.
   */
  onMark?(name: string): void;
  onTranscript?(transcript: AgentTranscript): void;
  /** The platform's id of this conversation (for post-call lookups); at most once. */
  onConversationId?(id: string): void;
  /** Called exactly once, after start() resolved, when the session ends for any reason. */
  onClose?(info: AgentCloseInfo): void;
  /** The agent asked to send digits toward the remote party (docs/API.md "Digits toward the callee"), already checked. */
  onSendDigits?(digits: string): void;
  /** The agent asked for the remote party to be transferred to `to` (docs/API.md "Transfers asked by the agent"), not yet screened. */
  onTransfer?(to: string): void;
  /** The agent asked for the call to end (docs/API.md "Agent WebSocket protocol", `hangup`). */
  onHangup?(): void;
}

/** Inputs of an {@link AgentSessionFactory}. */
export interface AgentSessionOptions {
  call: AgentCallInfo;
  endpoint: AgentEndpoint;
  /** The tenant's platform key, when stored: for signed URLs, call creation and auth headers. */
  apiKey?: string;
  /** Format the gateway would rather use, where the platform lets the client choose (Vapi). */
  preferredFormat?: AudioFormat;
  clock: Clock;
  log?: AgentSessionLog;
  /**
   * Name resolution for the socket's host, when the gateway has already resolved and checked the
   * address (agent URLs given by tenants): connecting to that address only defeats DNS rebinding.
   */
  lookup?: LookupFunction;
  /** Time allowed from start() until the platform is ready, HTTP steps included. */
  connectTimeoutMs: number;
  handlers: AgentSessionHandlers;
}

/** Builds a session; opens nothing until {@link AgentSession.start}. */
export type AgentSessionFactory = (options: AgentSessionOptions) => AgentSession;

/** One conversation with an agent platform over its streaming protocol. */
export interface AgentSession {
  /** Format of {@link sendAudio} frames. Final once start() resolved (ElevenLabs negotiates it). */
  readonly inputFormat: AudioFormat;
  /** Format of {@link AgentSessionHandlers.onAudio} frames. Final once start() resolved. */
  readonly outputFormat: AudioFormat;
  /**
   * Connects and waits until the platform is ready for audio.
   * @throws ProviderError (`unreachable`, `rejected` or `protocol`) when it is not ready within
   *   the connect time-out; the session is then closed and reports no onClose.
   */
  start(): Promise<void>;
  /** Caller audio, 20 ms in {@link inputFormat}. Dropped while held, before ready and after close. */
  sendAudio(frame: Buffer): void;
  /** Caller frames dropped because the platform stopped reading them (its backlog was full). */
  readonly audioFramesDropped: number;
  /** Sends an RFC 4733 digit where the protocol carries DTMF; false when it does not. */
  sendDtmf(digit: string): boolean;
  /**
   * The caller was put on hold: caller audio stops (custom also sends its `hold` event, with
   * `source`: `api` for POST /v1/calls/{id}/hold, `remote` for the remote party's own hold).
   */
  hold(source?: HoldSource): void;
  unhold(source?: HoldSource): void;
  /** The audio queued before mark `name` has played (or was cleared). */
  markPlayed(name: string): void;
  /**
   * An extension event of the gateway's own protocol (docs/API.md "Agent WebSocket protocol":
   * `dtmf_sent`, `amd`), sent as `{event, ...body}`; platforms with their own protocol have none.
   */
  notify?(event: string, body: Record<string, unknown>): void;
  /** Ends the session and closes the socket; later calls do nothing. */
  close(reason: string): void;
}

/**
 * How a session failed to start. `unreachable`: no answer (refused, DNS, time-out, 5xx);
 * `rejected`: the platform answered no (401, 403, 404, close with a policy code); `protocol`: the
 * platform answered something this adapter cannot use.
 */
export type ProviderErrorKind = 'unreachable' | 'rejected' | 'protocol';

/**
 * A vendor HTTP or WebSocket failure, converted at the provider boundary. Thrown (as a rejection)
 * only by {@link AgentSession.start}. The message never carries keys or signed URLs.
 */
export class ProviderError extends Error {
  override readonly name = 'ProviderError';
  readonly kind: ProviderErrorKind;
  readonly provider: string;
  /** HTTP status of the answer that failed, when there was one. */
  readonly status: number | undefined;

  constructor(provider: string, kind: ProviderErrorKind, message: string, options: { status?: number; cause?: unknown } = {}) {
    super(`${provider}: ${message}`, { cause: options.cause });
    this.provider = provider;
    this.kind = kind;
    this.status = options.status;
  }
}
