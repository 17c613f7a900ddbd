/** @module StreamConnection: one TCP or TLS socket with its SIP framer, idle timers and write path. */
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
  /** Accepted from a peer (true) or opened by us (false). */
  inbound: boolean;
  /** Close after this long without a SIP message either way; keep-alives do not count (0 = never). */
  idleTimeoutMs: number;
  /** Inbound only: close when no valid request came within this long of the accept (0 = never). */
  firstMessageTimeoutMs?: number;
  clock: Clock;
  delegate: TransportDelegate;
  onClosed(connection: StreamConnection): void;
}

/** Grace period for a peer to read what we wrote before we destroy a socket we ended. */
const CLOSE_GRACE_MS = 2000;
/** RFC 5626 §4.4.1: the pong to a double-CRLF ping. */
const PONG = Buffer.from('\r\n');
let nextId = 0;

/**
 * Frames incoming bytes into messages (RFC 3261 18.3) and answers RFC 5626 §4.4.1 double-CRLF
 * pings with a CRLF pong. It closes itself when no SIP message has passed either way for
 * `idleTimeoutMs`, and, when inbound, when no valid request came within `firstMessageTimeoutMs`.
 * Keep-alives extend neither (docs/RELIABILITY.md, "Descriptor budget"): a peer sending only
 * pings is closed as if silent. The timer is checked lazily: re-armed from the last message
 * rather than reset on every one.
 */
export class StreamConnection implements Connection {
  readonly id: string;
  readonly protocol: 'TCP' | 'TLS';
  readonly remote: SipEndpoint;
  readonly local: SipEndpoint;
  readonly #options: StreamConnectionOptions;
  readonly #socket: Socket;
  readonly #framer: SipStreamFramer;
  readonly #openedAt: number;
  #closed = false;
  /** When the last well-formed SIP message was received or sent (monotonic ms). */
  #lastMessage: number;
  /** Whether the peer has sent a valid request (an inbound connection's first-message rule). */
  #sawRequest = false;
  #idleTimer: TimerHandle | undefined;

  constructor(options: StreamConnectionOptions) {
    this.#options = options;
    this.#socket = options.socket;
    this.protocol = options.protocol;
    this.id = `${options.protocol.toLowerCase()}-${++nextId}`;
    this.remote = { address: normalizeAddress(this.#socket.remoteAddress ?? ''), port: this.#socket.remotePort ?? 0 };
    this.local = { address: normalizeAddress(this.#socket.localAddress ?? ''), port: this.#socket.localPort ?? 0 };
    this.#openedAt = this.#lastMessage = options.clock.monotonic();
    const source = this.#source();
    this.#framer = new SipStreamFramer({
      maxMessageSize: options.maxMessageSize,
      onMessage: (outcome) => {
        if (options.delegate.admit && !options.delegate.admit(source)) return;
        if (outcome.ok) {
          this.#lastMessage = options.clock.monotonic();
          if (outcome.message.kind === 'request') this.#sawRequest = true;
        }
        options.delegate.onMessage(outcome, source);
      },
      onKeepAlive: () => {
        // A ping costs a token like a message, and is not answered while the peer is not reading
        // our writes: a stream of pings must not queue pongs without bound.
        if (options.delegate.admit && !options.delegate.admit(source)) return;
        if (this.#closed || this.#socket.writableNeedDrain) return;
        this.#socket.write(PONG);
      },
      onError: (error, request) => {
        if (options.delegate.onStreamError) options.delegate.onStreamError(error, request, source);
        else this.close();
      },
    });
    this.#socket.setNoDelay(true);
    this.#socket.on('data', (chunk: Buffer) => this.#framer.push(chunk));
    this.#socket.on('error', (err) => {
      options.delegate.onError?.(TransportError.from(err, `${this.protocol} connection error`, { protocol: this.protocol, ...this.remote }));
    });
    this.#socket.on('close', () => this.#onClose());
    this.#armIdle();
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
    this.#lastMessage = this.#options.clock.monotonic();
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

  /** When the connection is due to close: the idle deadline, or the first-message one if sooner. */
  #deadline(): number {
    const { idleTimeoutMs, firstMessageTimeoutMs = 0, inbound } = this.#options;
    let at = idleTimeoutMs > 0 ? this.#lastMessage + idleTimeoutMs : Infinity;
    if (inbound && !this.#sawRequest && firstMessageTimeoutMs > 0) at = Math.min(at, this.#openedAt + firstMessageTimeoutMs);
    return at;
  }

  #armIdle(): void {
    const at = this.#deadline();
    if (at === Infinity || this.#closed) return;
    this.#idleTimer = this.#options.clock.setTimeout(() => {
      if (this.#options.clock.monotonic() >= this.#deadline()) this.close();
      else this.#armIdle();
    }, Math.max(0, at - this.#options.clock.monotonic()));
  }

  #onClose(): void {
    this.#closed = true;
    this.#idleTimer?.cancel();
    this.#idleTimer = undefined;
    this.#options.onClosed(this);
  }
}
