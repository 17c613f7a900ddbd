/**
 * @module What every WebSocket agent adapter shares: connect time-out, the session's life through
 * its state machine (agent-session-state.ts), failures classified (socket-failure.ts), caller
 * audio back-pressure, hold, and an idempotent close. Adapters add only their wire protocol.
 */
import WebSocket from 'ws';
import type { ClientRequest, IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { stripBrackets } from '../common/address-policy.js';
import type { TimerHandle } from '../common/clock.js';
import {
  ProviderError,
  type AgentCloseInfo,
  type AgentSession,
  type AgentSessionHandlers,
  type AgentSessionOptions,
  type AudioFormat,
  type HoldSource,
  type ProviderErrorKind,
} from './agent-session.js';
import { nextAgentSessionState, type AgentSessionState } from './agent-session-state.js';
import { describeError, errorKind, statusKind } from './socket-failure.js';
import { parseJsonObject } from './wire-json.js';

export { nextAgentSessionState, type AgentSessionState } from './agent-session-state.js';

/** RFC 6455 §7.4.1: 1000 normal closure, 1001 going away. 1005 means no code was sent. */
const NORMAL_CLOSE_CODES = new Set([1000, 1001, 1005]);
/**
 * Largest message taken from a platform: a minute of 24 kHz PCM16 in base64 (the playout keeps at
 * most a minute). ws's default is 100 MiB, which one tenant's agent could use to exhaust the
 * gateway's memory; a larger message closes the socket with 1009 (RFC 6455 §7.4.1).
 */
export const MAX_AGENT_MESSAGE_BYTES = 4 * 1024 * 1024;
/**
 * Caller audio queued in the process for a platform that is not reading, beyond what the kernel
 * buffers (several seconds of audio in any format). Past it, frames are dropped: a conversation
 * has no use for stale audio, and the queue would otherwise grow for as long as the stall lasts.
 */
export const MAX_QUEUED_AUDIO_BYTES = 256 * 1024;

/** Base of the WebSocket adapters. Subclasses implement the hooks; nothing else assigns state. */
export abstract class SocketAgentSession implements AgentSession {
  abstract readonly inputFormat: AudioFormat;
  abstract readonly outputFormat: AudioFormat;
  protected readonly provider: string;
  protected readonly options: AgentSessionOptions;
  protected readonly handlers: AgentSessionHandlers;
  #state: AgentSessionState = 'idle';
  #socket: WebSocket | undefined;
  #timer: TimerHandle | undefined;
  #held = false;
  #audioDropped = 0;
  #congested = false;
  #waiter: { resolve: () => void; reject: (error: ProviderError) => void } | undefined;
  readonly #abort = new AbortController();

  constructor(provider: string, options: AgentSessionOptions) {
    this.provider = provider;
    this.options = options;
    this.handlers = options.handlers;
  }

  get state(): AgentSessionState {
    return this.#state;
  }

  start(): Promise<void> {
    this.#transition('connecting');
    return new Promise<void>((resolve, reject) => {
      this.#waiter = { resolve, reject };
      const ms = this.options.connectTimeoutMs;
      this.#timer = this.options.clock.setTimeout(() => this.failStart('unreachable', `not ready within ${ms} ms`), ms);
      // Through a promise, so a connect() that throws fails start() like one that rejects.
      Promise.resolve().then(() => this.connect()).catch((error: unknown) => {
        if (error instanceof ProviderError) this.#fail(error);
        else this.failStart('unreachable', `connect failed: ${describeError(error)}`, error);
      });
    });
  }

  /** Caller frames dropped because the platform was not reading ({@link MAX_QUEUED_AUDIO_BYTES}). */
  get audioFramesDropped(): number {
    return this.#audioDropped;
  }

  sendAudio(frame: Buffer): void {
    if (this.#state !== 'ready' || this.#held) return;
    const queued = this.#socket?.bufferedAmount ?? 0;
    if (queued > MAX_QUEUED_AUDIO_BYTES) {
      this.#audioDropped++;
      if (!this.#congested) this.log('warn', 'platform not reading; dropping caller audio', { queued_bytes: queued });
      this.#congested = true;
      return;
    }
    if (this.#congested) this.log('info', 'platform reading again', { frames_dropped: this.#audioDropped });
    this.#congested = false;
    this.writeAudio(frame);
  }

  sendDtmf(_digit: string): boolean {
    return false;
  }

  hold(source: HoldSource = 'api'): void {
    if (this.#held) return;
    this.#held = true;
    if (this.#state === 'ready') this.onHoldChange(true, source);
  }

  unhold(source: HoldSource = 'api'): void {
    if (!this.#held) return;
    this.#held = false;
    if (this.#state === 'ready') this.onHoldChange(false, source);
  }

  markPlayed(_name: string): void {}

  close(reason: string): void {
    if (this.#state === 'closed') return;
    if (this.#state !== 'ready') {
      this.failStart('unreachable', 'closed before the agent was ready');
      if (this.#state === 'idle') this.#transition('closed');
      return;
    }
    this.beforeClose(reason);
    this.#transition('closed');
    // RFC 6455 §5.5: a control frame payload is at most 125 bytes, 2 of them the code.
    this.#socket?.close(1000, Buffer.from(reason).subarray(0, 123).toString());
    this.handlers.onClose?.({ by: 'gateway', code: 1000, reason });
  }

  /** Does the HTTP steps, if any, then calls {@link openSocket}. Rejections fail start(). */
  protected abstract connect(): Promise<void>;
  /** The socket opened: send the greeting; call {@link ready} now or when the platform answers. */
  protected abstract onOpen(): void;
  /** One JSON text frame from the platform. */
  protected abstract onMessage(message: Record<string, unknown>): void;
  /** Puts one caller frame on the wire (only called when ready and not held). */
  protected abstract writeAudio(frame: Buffer): void;

  protected onBinary(data: Buffer): void {
    this.log('debug', 'binary frame ignored', { bytes: data.length });
  }

  /** The call went on hold or off it; `source` says who held it (the API, or the remote party's own hold). */
  protected onHoldChange(_held: boolean, _source: HoldSource): void {}

  /** Last words before a gateway close (custom sends `stop`, Vapi `end-call`). */
  protected beforeClose(_reason: string): void {}

  /** Who ended the conversation, from the platform's close code. */
  protected closedBy(code: number): AgentCloseInfo['by'] {
    return NORMAL_CLOSE_CODES.has(code) ? 'agent' : 'error';
  }

  protected log(level: 'debug' | 'info' | 'warn', message: string, fields: Record<string, string | number | boolean> = {}): void {
    this.options.log?.(level, `${this.provider}: ${message}`, { call_id: this.options.call.callId, ...fields });
  }

  /** The platform is ready for audio: start() resolves. */
  protected ready(): void {
    if (this.#state !== 'connecting') return;
    this.#timer?.cancel();
    this.#transition('ready');
    this.log('info', 'agent session ready');
    this.#waiter?.resolve();
  }

  /** start() rejects with a ProviderError of `kind`; the socket and any request are dropped. */
  protected failStart(kind: ProviderErrorKind, message: string, cause?: unknown, status?: number): void {
    this.#fail(new ProviderError(this.provider, kind, message, { cause, ...(status === undefined ? {} : { status }) }));
  }

  /** Abort signal of the start-up HTTP steps; fires when start() fails. */
  protected get signal(): AbortSignal {
    return this.#abort.signal;
  }

  /**
   * Opens the WebSocket. `url` may hold a token: it is never logged, only its host. With a
   * `lookup` option, a literal address goes through it first: sockets skip `lookup` for those,
   * and the gateway's outbound-address policy must see every host (docs/SECURITY.md).
   */
  protected openSocket(url: string, headers: Record<string, string> = {}, protocols: string[] = []): void {
    const { lookup } = this.options;
    let host = '';
    try {
      host = stripBrackets(new URL(url).hostname);
    } catch {
      // ws reports the URL itself when it cannot parse it.
    }
    if (!lookup || isIP(host) === 0) return this.#openSocket(url, headers, protocols);
    lookup(host, {}, (err) => {
      if (err) this.failStart('rejected', `agent address ${host} refused`, err);
      else this.#openSocket(url, headers, protocols);
    });
  }

  #openSocket(url: string, headers: Record<string, string>, protocols: string[]): void {
    if (this.#state !== 'connecting') return;
    // No permessage-deflate (ws offers it by default): deflating base64 audio every 20 ms saves little and costs
    // a zlib context per direction per call, each operation queued on the shared thread pool. See docs/DECISIONS.md.
    const socket = new WebSocket(url, protocols, {
      headers, perMessageDeflate: false, maxPayload: MAX_AGENT_MESSAGE_BYTES, handshakeTimeout: this.options.connectTimeoutMs, ...(this.options.lookup ? { lookup: this.options.lookup } : {}),
    });
    this.#socket = socket;
    this.log('debug', 'connecting', { host: new URL(url).host });
    socket.on('open', () => this.onOpen());
    socket.on('message', (data: Buffer, isBinary: boolean) => this.#onFrame(data, isBinary));
    socket.on('unexpected-response', (request: ClientRequest, response: IncomingMessage) => {
      const status = response.statusCode ?? 0;
      response.resume();
      request.destroy();
      this.failStart(statusKind(status), `WebSocket upgrade answered ${status}`, undefined, status);
    });
    socket.on('error', (error: Error) => {
      if (this.#state === 'connecting') this.failStart(errorKind(error), `socket error: ${describeError(error)}`, error);
      else this.log('warn', 'socket error', { error: describeError(error) });
    });
    socket.on('close', (code: number, reason: Buffer) => this.#onSocketClose(code, reason.toString()));
  }

  /** Sends one JSON text frame; false when the socket is not open. */
  protected sendJson(message: unknown): boolean {
    return this.sendRaw(JSON.stringify(message));
  }

  protected sendRaw(data: string | Buffer): boolean {
    if (this.#socket?.readyState !== WebSocket.OPEN) return false;
    // Text goes as its UTF-8 bytes: ws then masks it into the frame it allocates and writes once,
    // where a string is masked in a copy written beside its header (bench/calls/ws-text-frames.ts).
    this.#socket.send(typeof data === 'string' ? Buffer.from(data) : data, { binary: typeof data !== 'string' });
    return true;
  }

  /** GETs or POSTs JSON under the start-up time-out. 4xx rejects as `rejected`, 5xx `unreachable`. */
  protected async fetchJson(url: string, init: RequestInit, what: string): Promise<Record<string, unknown>> {
    let response: Response;
    try {
      response = await fetch(url, { ...init, signal: this.signal });
    } catch (error) {
      throw new ProviderError(this.provider, 'unreachable', `${what}: no answer (${describeError(error)})`, { cause: error });
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new ProviderError(this.provider, statusKind(response.status), `${what} answered ${response.status}`, { status: response.status });
    }
    const body = parseJsonObject(await response.text());
    if (!body) throw new ProviderError(this.provider, 'protocol', `${what}: answer is not a JSON object`);
    return body;
  }

  #onFrame(data: Buffer, isBinary: boolean): void {
    if (this.#state === 'closed') return;
    if (isBinary) {
      this.onBinary(data);
      return;
    }
    const message = parseJsonObject(data.toString('utf8'));
    if (!message) {
      if (this.#state === 'connecting') this.failStart('protocol', 'text frame is not a JSON object');
      else this.log('warn', 'text frame is not a JSON object; ignored');
      return;
    }
    this.onMessage(message);
  }

  #onSocketClose(code: number, reason: string): void {
    if (this.#state === 'connecting') {
      // RFC 6455 §7.4.1: 1008 is a policy refusal, the close a platform sends for a bad key.
      this.failStart(code === 1008 ? 'rejected' : code === 1006 ? 'unreachable' : 'protocol', `closed with ${code} before ready`);
      return;
    }
    if (this.#state !== 'ready') return;
    this.#transition('closed');
    const by = this.closedBy(code);
    this.log(by === 'error' ? 'warn' : 'info', 'closed by the platform', { code, reason });
    this.handlers.onClose?.({ by, code, reason });
  }

  #fail(error: ProviderError): void {
    if (this.#state !== 'connecting') return;
    this.#timer?.cancel();
    this.#transition('closed');
    this.#abort.abort();
    this.#socket?.terminate();
    this.log('warn', 'agent session failed to start', { kind: error.kind, error: error.message });
    this.#waiter?.reject(error);
  }

  #transition(to: AgentSessionState): void {
    this.#state = nextAgentSessionState(this.#state, to);
  }
}
