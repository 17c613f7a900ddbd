/** @module TransportLayer: owns the listening transports and gives the layer above send, receive and response routing. */
import { systemClock, type Clock } from '../../../common/clock.js';
import type { SipParseError } from '../grammar/parse-error.js';
import { formatVia } from '../grammar/via.js';
import type { ParseOutcome } from '../messages/parse.js';
import { createResponse } from '../messages/response.js';
import { serializeMessage } from '../messages/serialize.js';
import type { SipMessage, SipRequest, SipResponse } from '../messages/sip-message.js';
import { ConnectionLimiter, type ConnectionLimits, type ConnectionRefusal } from './connection-limiter.js';
import { TokenBucketLimiter, type RateLimitOptions } from './rate-limiter.js';
import { TcpTransport, TlsTransport, type TlsOptions } from './stream-transport.js';
import { TransportError } from './transport-error.js';
import {
  familyOf, type Connection, type MessageSource, type SipEndpoint, type Transport, type TransportDelegate,
  type TransportProtocol, type TransportTarget,
} from './transport.js';
import { UdpTransport } from './udp-transport.js';
import type { SipTraceEvent, SipTraceTap } from './sip-trace-tap.js';
import { responseTarget, stampReceived } from './via-routing.js';

/** One listening point. TLS needs `tls`. */
export interface ListenOptions {
  protocol: TransportProtocol;
  host: string;
  port: number;
  tls?: TlsOptions;
  /** Host to advertise in Via and Contact when bound to a wildcard or private address (public IP or name). */
  advertisedHost?: string;
}

/** What the layer above hears. Every method is optional except `onMessage`. */
export interface TransportLayerDelegate {
  /** A well-formed request (top Via already stamped, RFC 3261 18.2.1) or response. */
  onMessage(message: SipMessage, source: MessageSource): void;
  /** A malformed message: requests were answered (400/505/513) where possible, responses dropped. */
  onMalformed?(error: SipParseError, source: MessageSource): void;
  /** A packet dropped before parsing: over the rate limit or the maximum size. */
  onDropped?(reason: 'rate-limit' | 'oversize', source: MessageSource): void;
  /** An inbound TCP/TLS connection over a cap was reset at once. */
  onConnectionRefused?(reason: ConnectionRefusal, source: MessageSource): void;
  onError?(error: TransportError): void;
  /** The SIP trace tap threw: the message went on, its trace entry is lost. */
  onTraceFailed?(error: unknown): void;
}

export interface TransportLayerOptions {
  listen: readonly ListenOptions[];
  delegate: TransportLayerDelegate;
  /** Largest message accepted, in octets (default 65,535). */
  maxMessageSize?: number;
  /** TCP/TLS connections with no SIP message either way for this long close (default 5 minutes). */
  idleTimeoutMs?: number;
  /** Inbound TCP/TLS connections that sent no valid request within this long close (default 20 s). */
  firstMessageTimeoutMs?: number;
  /** Caps on inbound TCP/TLS connections, all stream listening points together; absent = none. */
  connectionLimits?: ConnectionLimits;
  /** Per-source-IP token bucket; absent = no limit. */
  rateLimit?: RateLimitOptions;
  /** TLS settings for outbound connections when no TLS listening point is configured. */
  tlsClient?: TlsOptions;
  clock?: Clock;
  /**
   * RFC 3261 18.1.1: requests larger than this many octets (1300 when the path MTU is unknown)
   * go over TCP instead of UDP, with the top Via rewritten to TCP. Off when absent, because many
   * carriers accept only UDP; enable it for peers known to listen on TCP.
   */
  udpSizeLimitForTcp?: number;
  /** Told every message received and sent (docs/API.md "SIP trace of a call"); none when absent. */
  trace?: SipTraceTap;
}

/** Characters of a parse failure's detail quoted in a 400 reason phrase. */
const MAX_REASON_DETAIL = 120;

/**
 * The transport layer of RFC 3261 18. Incoming requests get `received`/`rport` stamped before
 * delivery; malformed requests are answered here, so the layers above only ever see messages
 * that passed `parseMessage`. Responses are routed by their top Via (18.2.2).
 */
export class TransportLayer {
  readonly #options: TransportLayerOptions;
  readonly #transports: Transport[] = [];
  readonly #limiter: TokenBucketLimiter | undefined;
  readonly #connections: ConnectionLimiter | undefined;
  readonly #clock: Clock;

  constructor(options: TransportLayerOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#limiter = options.rateLimit ? new TokenBucketLimiter(options.rateLimit, this.#clock) : undefined;
    this.#connections = options.connectionLimits ? new ConnectionLimiter(options.connectionLimits) : undefined;
    const delegate = this.#transportDelegate();
    const common = { maxMessageSize: options.maxMessageSize ?? 65_535, delegate };
    const stream = {
      ...common, clock: this.#clock,
      ...(options.idleTimeoutMs !== undefined ? { idleTimeoutMs: options.idleTimeoutMs } : {}),
      ...(options.firstMessageTimeoutMs !== undefined ? { firstMessageTimeoutMs: options.firstMessageTimeoutMs } : {}),
      ...(this.#connections ? { limiter: this.#connections } : {}),
    };
    for (const l of options.listen) {
      if (l.protocol === 'UDP') this.#transports.push(new UdpTransport({ ...common, host: l.host, port: l.port }));
      else if (l.protocol === 'TCP') this.#transports.push(new TcpTransport({ ...stream, host: l.host, port: l.port }));
      else {
        const tls = l.tls ?? options.tlsClient;
        if (!tls) throw new TransportError('TLS listening point without certificate and key', { protocol: 'TLS' });
        this.#transports.push(new TlsTransport({ ...stream, host: l.host, port: l.port, tls }));
      }
    }
  }

  /** Inbound TCP/TLS connections open now (counted only when `connectionLimits` is set). */
  get inboundConnections(): number {
    return this.#connections?.open ?? 0;
  }

  /** Binds every listening point; rejects with TransportError when one fails (the others are closed). */
  async start(): Promise<void> {
    try {
      await Promise.all(this.#transports.map((t) => t.listen()));
    } catch (err) {
      await this.stop();
      throw err;
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.#transports.map((t) => t.close()));
  }

  /** The bound address of the first listening point of `protocol` (and address family), for Via and Contact. */
  listeningPoint(protocol: TransportProtocol, family?: 4 | 6): SipEndpoint | undefined {
    return this.#transports.find((t) => t.protocol === protocol && (family === undefined || t.family === family))?.local;
  }

  /** Sends a message to an explicit target. Rejects with TransportError. */
  async send(message: SipMessage, target: TransportTarget): Promise<void> {
    const data = serializeMessage(message);
    const limit = this.#options.udpSizeLimitForTcp;
    if (limit !== undefined && message.kind === 'request' && target.protocol === 'UDP' && data.length > limit && this.#hasProtocol('TCP')) {
      await this.sendRaw(serializeMessage(this.#overTcp(message)), { ...target, protocol: 'TCP' });
      return;
    }
    await this.sendRaw(data, target);
  }

  #hasProtocol(protocol: TransportProtocol): boolean {
    return this.#transports.some((t) => t.protocol === protocol);
  }

  /** RFC 3261 18.1.1: the top Via names the transport actually used. The branch is kept, so the transaction still matches. */
  #overTcp(request: SipRequest): SipRequest {
    const copy = request.clone();
    const via = copy.topVia;
    const local = this.localAddress('TCP');
    const sentBy = via.port !== undefined ? { ...via, port: local.port } : via;
    copy.headers.replaceFirstValue('Via', formatVia({ ...sentBy, protocol: 'TCP', params: new Map(via.params) }));
    return copy;
  }

  /** Sends prepared bytes (retransmissions reuse the serialized form); resolves to the connection used (TCP/TLS). */
  async sendRaw(data: Buffer, target: TransportTarget): Promise<Connection | undefined> {
    const transport = this.#transportFor(target);
    const connection = await transport.send(data, target);
    if (this.#options.trace) {
      this.#trace({
        direction: 'sent', at: this.#clock.now(), protocol: target.protocol, source: connection?.local ?? transport.local,
        destination: { address: target.address, port: target.port }, data,
      });
    }
    return connection;
  }

  /** A trace entry; a tap that throws costs the entry, never the message (docs/API.md "SIP trace of a call"). */
  #trace(event: SipTraceEvent): void {
    try {
      this.#options.trace?.message(event);
    } catch (err) {
      this.#options.delegate.onTraceFailed?.(err);
    }
  }

  /** RFC 3261 18.2.2: sends a response where its top Via says, over the request's connection when reliable. */
  async sendResponse(response: SipResponse, source?: MessageSource): Promise<void> {
    await this.send(response, responseTarget(response, source));
  }

  /**
   * The host and port to write into Via and Contact for `protocol`: the advertised host when
   * configured, else the bound address. (Shape of the UA core's SipTransportPort.)
   */
  localAddress(protocol: TransportProtocol): { host: string; port: number } {
    const index = this.#transports.findIndex((t) => t.protocol === protocol);
    const t = this.#transports[index];
    if (!t) throw new TransportError(`no ${protocol} listening point`, { protocol });
    return { host: this.#options.listen[index]?.advertisedHost ?? t.local.address, port: t.local.port };
  }

  /** RFC 3261 17.1.1.2: TCP and TLS are reliable, so no retransmission timers run over them. */
  isReliable(protocol: TransportProtocol): boolean {
    return protocol !== 'UDP';
  }

  #transportFor(target: TransportTarget): Transport {
    const family = familyOf(target.address);
    const t = this.#transports.find((x) => x.protocol === target.protocol && x.family === family)
      ?? this.#transports.find((x) => x.protocol === target.protocol);
    if (!t) throw new TransportError(`no ${target.protocol} transport for ${target.address}`, { protocol: target.protocol, address: target.address, port: target.port });
    return t;
  }

  #transportDelegate(): TransportDelegate {
    const up = this.#options.delegate;
    return {
      admit: (source) => {
        if (!this.#limiter || this.#limiter.admit(source.address)) return true;
        up.onDropped?.('rate-limit', source);
        return false;
      },
      onMessage: (outcome, source) => this.#onMessage(outcome, source),
      onOversize: (_size, source) => up.onDropped?.('oversize', source),
      onConnectionRefused: (reason, source) => up.onConnectionRefused?.(reason, source),
      onStreamError: (error, request, source) => {
        up.onMalformed?.(error, source);
        const answer = request ? this.#answerMalformed(request, error, source) : Promise.resolve();
        void answer.finally(() => source.connection.close());
      },
      onError: (error) => up.onError?.(error),
    };
  }

  #onMessage(outcome: ParseOutcome, source: MessageSource): void {
    const up = this.#options.delegate;
    if (!outcome.ok) {
      up.onMalformed?.(outcome.error, source);
      if (outcome.request) void this.#answerMalformed(outcome.request, outcome.error, source);
      return;
    }
    const message = outcome.message;
    if (this.#options.trace) {
      this.#trace({
        direction: 'received', at: this.#clock.now(), protocol: source.protocol, source: { address: source.address, port: source.port },
        destination: source.connection?.local ?? source.local, data: serializeMessage(message),
      });
    }
    if (message.kind === 'request') stampReceived(message, source);
    up.onMessage(message, source);
  }

  /**
   * RFC 3261 8.2 / 21.4.1: a malformed request is answered, never passed up; the answer goes back
   * to the packet's source (the Via may be the malformed part). No answer to a malformed ACK (17.2.1).
   */
  async #answerMalformed(request: SipRequest, error: SipParseError, source: MessageSource): Promise<void> {
    if (request.method === 'ACK') return;
    // The detail quotes the offending input, which can be as long as the message: cut it so the
    // answer still fits in a datagram (RFC 3261 18.1.1) when the request filled one.
    const detail = error.reason.length > MAX_REASON_DETAIL ? `${error.reason.slice(0, MAX_REASON_DETAIL)}...` : error.reason;
    const reason = error.status === 400 ? `Bad Request (${detail})` : undefined;
    const response = createResponse(request, error.status, reason?.replace(/[\r\n]/g, ' '));
    const target: TransportTarget = { protocol: source.protocol, address: source.address, port: source.port };
    if (source.connection) target.connection = source.connection;
    try {
      await this.sendRaw(serializeMessage(response), target);
    } catch (err) {
      this.#options.delegate.onError?.(TransportError.from(err, 'answer to malformed request failed', target));
    }
  }
}
