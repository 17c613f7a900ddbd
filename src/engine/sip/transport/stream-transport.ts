/** @module TcpTransport and TlsTransport: SIP over TCP and TLS streams with connection reuse (RFC 3261 18, 26.2). */
import { createServer as createTcpServer, connect as tcpConnect, isIP, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, connect as tlsConnect, type TLSSocket } from 'node:tls';
import { systemClock, type Clock } from '../../../common/clock.js';
import type { ConnectionLimiter } from './connection-limiter.js';
import { StreamConnection } from './stream-connection.js';
import { TransportError } from './transport-error.js';
import {
  familyOf, normalizeAddress, type Connection, type SipEndpoint, type Transport, type TransportOptions,
  type TransportTarget,
} from './transport.js';

export interface StreamTransportOptions extends TransportOptions {
  /** Connections with no SIP message either way for this long close (default 5 minutes; 0 = never). */
  idleTimeoutMs?: number;
  /**
   * Inbound connections that sent no valid request this long after the accept close (default
   * 20 s; 0 = never); for TLS it also bounds the handshake.
   */
  firstMessageTimeoutMs?: number;
  /** Caps on inbound connections, shared by the stream listeners of one transport layer. */
  limiter?: ConnectionLimiter;
  clock?: Clock;
  /** Outbound connect timeout (default 10 s): RFC 3261 17.1.4 needs a failure within Timer B/F. */
  connectTimeoutMs?: number;
}

/**
 * Certificate material for TLS (PEM). `cert` and `key` are served to inbound connections and
 * presented to servers that ask for a client certificate (mutual TLS); `ca` and
 * `rejectUnauthorized` apply to outbound connections.
 */
export interface TlsOptions {
  cert: string | Buffer;
  key: string | Buffer;
  ca?: string | Buffer | (string | Buffer)[];
  /** Verify the server certificate on outbound connections (default true). */
  rejectUnauthorized?: boolean;
}

const DEFAULT_IDLE_MS = 5 * 60_000;
const DEFAULT_FIRST_MESSAGE_MS = 20_000;

/** Shared TCP/TLS logic: a listening server plus a map of open connections keyed by remote address and port. */
abstract class StreamTransport implements Transport {
  abstract readonly protocol: 'TCP' | 'TLS';
  readonly family: 4 | 6;
  protected readonly options: StreamTransportOptions;
  protected readonly clock: Clock;
  readonly #connections = new Map<string, StreamConnection>();
  readonly #pending = new Map<string, Promise<StreamConnection>>();
  #server: Server | undefined;
  #local: SipEndpoint;

  constructor(options: StreamTransportOptions) {
    this.options = options;
    this.clock = options.clock ?? systemClock;
    this.family = familyOf(options.host);
    this.#local = { address: options.host, port: options.port };
  }

  protected abstract createServer(onSocket: (socket: Socket) => void): Server;
  protected abstract connectSocket(target: TransportTarget): Socket;
  /** The event that says an outbound socket is ready: 'connect' or 'secureConnect'. */
  protected abstract readonly readyEvent: string;

  get local(): SipEndpoint {
    return this.#local;
  }

  /** Open connections (for metrics and tests). */
  get connectionCount(): number {
    return this.#connections.size;
  }

  listen(): Promise<void> {
    const server = this.createServer((socket) => this.#adopt(socket, true));
    this.#gate(server);
    this.#server = server;
    server.on('error', (err) => this.options.delegate.onError?.(TransportError.from(err, `${this.protocol} server error`, { protocol: this.protocol })));
    return new Promise((resolve, reject) => {
      const onError = (err: Error): void => {
        reject(TransportError.from(err, `${this.protocol} listen failed`, { protocol: this.protocol, address: this.options.host, port: this.options.port }));
      };
      server.once('error', onError);
      server.listen({ port: this.options.port, host: this.options.host, ipv6Only: this.family === 6 }, () => {
        server.off('error', onError);
        const a = server.address();
        if (a !== null && typeof a === 'object') this.#local = { address: a.address, port: a.port };
        resolve();
      });
    });
  }

  async send(data: Buffer, target: TransportTarget): Promise<Connection | undefined> {
    let connection: Connection | undefined = target.connection && !target.connection.closed ? target.connection : undefined;
    connection ??= this.#connections.get(keyOf(target)) ?? (await this.#connect(target));
    await connection.send(data);
    return connection;
  }

  async close(): Promise<void> {
    for (const c of [...this.#connections.values()]) c.destroy();
    const server = this.#server;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The first-message time-out in effect (also the TLS handshake's). */
  protected get firstMessageTimeoutMs(): number {
    return this.options.firstMessageTimeoutMs ?? DEFAULT_FIRST_MESSAGE_MS;
  }

  /**
   * Puts the connection caps in front of the server's own 'connection' listeners: TCP's accept
   * callback, and for TLS the listener node:tls registers to start the handshake, so a refused
   * socket never costs a handshake. A refused socket is reset at once.
   */
  #gate(server: Server): void {
    const limiter = this.options.limiter;
    if (!limiter) return;
    const listeners = server.listeners('connection') as ((socket: Socket) => void)[];
    server.removeAllListeners('connection');
    server.on('connection', (socket: Socket) => {
      if (socket.remoteAddress === undefined) return void socket.destroy();
      const address = normalizeAddress(socket.remoteAddress);
      const admission = limiter.admit(address);
      if (!admission.ok) {
        try {
          socket.resetAndDestroy();
        } catch {
          socket.destroy();
        }
        this.options.delegate.onConnectionRefused?.(admission.reason, { protocol: this.protocol, address, port: socket.remotePort ?? 0, local: this.#local });
        return;
      }
      socket.once('close', () => admission.release());
      for (const listener of listeners) listener.call(server, socket);
    });
  }

  #adopt(socket: Socket, inbound: boolean): StreamConnection {
    const connection = new StreamConnection({
      protocol: this.protocol,
      socket,
      listening: this.#local,
      maxMessageSize: this.options.maxMessageSize,
      inbound,
      idleTimeoutMs: this.options.idleTimeoutMs ?? DEFAULT_IDLE_MS,
      firstMessageTimeoutMs: this.firstMessageTimeoutMs,
      clock: this.clock,
      delegate: this.options.delegate,
      onClosed: (c) => {
        if (this.#connections.get(keyOf(c.remote)) === c) this.#connections.delete(keyOf(c.remote));
      },
    });
    // Inbound connections are reusable for requests back to the same address and port (RFC 3261 18.2.2, RFC 5923 spirit).
    if (!connection.closed) this.#connections.set(keyOf(connection.remote), connection);
    return connection;
  }

  #connect(target: TransportTarget): Promise<StreamConnection> {
    const key = keyOf(target);
    const pending = this.#pending.get(key);
    if (pending) return pending;
    const attempt = new Promise<StreamConnection>((resolve, reject) => {
      let socket: Socket;
      try {
        socket = this.connectSocket(target);
      } catch (err) {
        // Invalid address or port: thrown synchronously by node:net and node:tls.
        reject(TransportError.from(err, `${this.protocol} connect failed`, { protocol: this.protocol, address: target.address, port: target.port }));
        return;
      }
      const timer = this.clock.setTimeout(() => socket.destroy(new Error('connect timeout')), this.options.connectTimeoutMs ?? 10_000);
      socket.once(this.readyEvent, () => {
        timer.cancel();
        socket.removeAllListeners('error');
        resolve(this.#adopt(socket, false));
      });
      socket.once('error', (err) => {
        timer.cancel();
        socket.destroy();
        reject(TransportError.from(err, `${this.protocol} connect failed`, { protocol: this.protocol, address: target.address, port: target.port }));
      });
    });
    this.#pending.set(key, attempt);
    const done = (): void => void this.#pending.delete(key);
    attempt.then(done, done);
    return attempt;
  }
}

function keyOf(e: SipEndpoint): string {
  return `${normalizeAddress(e.address)}|${e.port}`;
}

/** SIP over TCP. */
export class TcpTransport extends StreamTransport {
  readonly protocol = 'TCP' as const;
  protected readonly readyEvent = 'connect';

  protected createServer(onSocket: (socket: Socket) => void): Server {
    return createTcpServer(onSocket);
  }

  protected connectSocket(target: TransportTarget): Socket {
    return tcpConnect({ host: target.address, port: target.port });
  }
}

/** SIP over TLS (RFC 3261 26.2; `sips:` targets resolve to it). */
export class TlsTransport extends StreamTransport {
  readonly protocol = 'TLS' as const;
  protected readonly readyEvent = 'secureConnect';
  readonly #tls: TlsOptions;

  constructor(options: StreamTransportOptions & { tls: TlsOptions }) {
    super(options);
    this.#tls = options.tls;
  }

  protected createServer(onSocket: (socket: Socket) => void): Server {
    const handshake = this.firstMessageTimeoutMs > 0 ? { handshakeTimeout: this.firstMessageTimeoutMs } : {};
    const server = createTlsServer({ cert: this.#tls.cert, key: this.#tls.key, ...handshake }, (socket: TLSSocket) => onSocket(socket));
    server.on('tlsClientError', (err) => {
      this.options.delegate.onError?.(TransportError.from(err, 'TLS handshake failed', { protocol: 'TLS' }));
    });
    return server;
  }

  protected connectSocket(target: TransportTarget): Socket {
    // SNI and certificate checks use the domain of the SIP URI (RFC 5922 7.2), never an IP literal.
    const servername = target.hostname !== undefined && !isIP(target.hostname) ? target.hostname : undefined;
    return tlsConnect({
      host: target.address,
      port: target.port,
      // Our certificate goes out only if the server sends a CertificateRequest (TLS 1.3 §4.3.2):
      // trunks and platforms that insist on mutual TLS get it, others never see it.
      cert: this.#tls.cert,
      key: this.#tls.key,
      ...(servername !== undefined ? { servername } : {}),
      ...(this.#tls.ca !== undefined ? { ca: this.#tls.ca } : {}),
      rejectUnauthorized: this.#tls.rejectUnauthorized ?? true,
    });
  }
}
