/** @module StreamConnection: one TCP or TLS socket with its SIP framer, idle timer and write path. */
import type { Socket } from 'node:net';
import type { Clock, TimerHandle } from '../../../common/clock.js';
import { SipStreamFramer } from '../messages/parse.js';
import { TransportError } from './transport-error.js';
import { normalizeAddress, type Connection, type MessageSource, type SipEndpoint, type TransportDelegate } from './transport.js';

export interface StreamConnectionOptions {
  protocol: 'TCP' | 'TLS';
  socket: Socket;
  /** The listening point the connection belongs to (for MessageSource.local). */
  listening: SipEndpoint;
  maxMessageSize: number;
  /** Close after this long without traffic either way (0 = never). */
  idleTimeoutMs: number;
  clock: Clock;
  delegate: TransportDelegate;
  onClosed(connection: StreamConnection): void;
}

/** Grace period for a peer to read what we wrote before we destroy a socket we ended. */
const CLOSE_GRACE_MS = 2000;
let nextId = 0;

/**
 * Frames incoming bytes into messages (RFC 3261 18.3), answers RFC 5626 double-CRLF pings with a
 * CRLF pong, and closes itself after `idleTimeoutMs` of silence, checked lazily: the timer is
 * re-armed from the last activity rather than reset on every packet.
 */
export class StreamConnection implements Connection {
  readonly id: string;
  readonly protocol: 'TCP' | 'TLS';
  readonly remote: SipEndpoint;
  readonly local: SipEndpoint;
  readonly #options: StreamConnectionOptions;
  readonly #socket: Socket;
  readonly #framer: SipStreamFramer;
  #closed = false;
  #lastActivity: number;
  #idleTimer: TimerHandle | undefined;

  constructor(options: StreamConnectionOptions) {
    this.#options = options;
    this.#socket = options.socket;
    this.protocol = options.protocol;
    this.id = `${options.protocol.toLowerCase()}-${++nextId}`;
    this.remote = { address: normalizeAddress(this.#socket.remoteAddress ?? ''), port: this.#socket.remotePort ?? 0 };
    this.local = { address: normalizeAddress(this.#socket.localAddress ?? ''), port: this.#socket.localPort ?? 0 };
    this.#lastActivity = options.clock.monotonic();
    const source = this.#source();
    this.#framer = new SipStreamFramer({
      maxMessageSize: options.maxMessageSize,
      onMessage: (outcome) => {
        if (options.delegate.admit && !options.delegate.admit(source)) return;
        options.delegate.onMessage(outcome, source);
      },
      onKeepAlive: () => void this.send(Buffer.from('\r\n')).catch(() => undefined),
      onError: (error, request) => {
        if (options.delegate.onStreamError) options.delegate.onStreamError(error, request, source);
        else this.close();
      },
    });
    this.#socket.setNoDelay(true);
    this.#socket.on('data', (chunk: Buffer) => {
      this.#lastActivity = options.clock.monotonic();
      this.#framer.push(chunk);
    });
    this.#socket.on('error', (err) => {
      options.delegate.onError?.(TransportError.from(err, `${this.protocol} connection error`, { protocol: this.protocol, ...this.remote }));
    });
    this.#socket.on('close', () => this.#onClose());
    this.#armIdle(options.idleTimeoutMs);
  }

  get closed(): boolean {
    return this.#closed;
  }

  #source(): MessageSource & { connection: Connection } {
    return { protocol: this.protocol, ...this.remote, local: this.#options.listening, connection: this };
  }

  send(data: Buffer): Promise<void> {
    if (this.#closed) {
      return Promise.reject(new TransportError('connection is closed', { protocol: this.protocol, ...this.remote }));
    }
    this.#lastActivity = this.#options.clock.monotonic();
    return new Promise((resolve, reject) => {
      this.#socket.write(data, (err) => {
        if (err) reject(TransportError.from(err, `${this.protocol} write failed`, { protocol: this.protocol, ...this.remote }));
        else resolve();
      });
    });
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#socket.end();
    this.#options.clock.setTimeout(() => this.#socket.destroy(), CLOSE_GRACE_MS);
    this.#onClose();
  }

  /** Immediate teardown (transport shutdown). */
  destroy(): void {
    this.#closed = true;
    this.#socket.destroy();
    this.#onClose();
  }

  #armIdle(ms: number): void {
    if (this.#options.idleTimeoutMs <= 0) return;
    this.#idleTimer = this.#options.clock.setTimeout(() => {
      const quiet = this.#options.clock.monotonic() - this.#lastActivity;
      if (quiet >= this.#options.idleTimeoutMs) this.close();
      else this.#armIdle(this.#options.idleTimeoutMs - quiet);
    }, ms);
  }

  #onClose(): void {
    this.#closed = true;
    this.#idleTimer?.cancel();
    this.#idleTimer = undefined;
    this.#options.onClosed(this);
  }
}
