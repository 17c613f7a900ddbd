/** @module The Transport contract shared by UDP, TCP and TLS, and the types that describe where messages come from and go. */
import type { ParseOutcome } from '../messages/parse.js';
import type { SipParseError } from '../grammar/parse-error.js';
import type { SipRequest } from '../messages/sip-message.js';
import type { ConnectionRefusal } from './connection-limiter.js';
import type { TransportError } from './transport-error.js';

/** RFC 3261 18: the transports this stack speaks. */
export type TransportProtocol = 'UDP' | 'TCP' | 'TLS';

/** An IP address (IPv6 without brackets) and port. */
export interface SipEndpoint {
  address: string;
  port: number;
}

/** Where to send: a transport and an address, optionally an existing connection to prefer. */
export interface TransportTarget extends SipEndpoint {
  protocol: TransportProtocol;
  connection?: Connection;
  /** The domain the target was resolved from: TLS server name (RFC 5922). */
  hostname?: string;
}

/** A TCP or TLS connection, inbound or outbound. */
export interface Connection {
  readonly id: string;
  readonly protocol: 'TCP' | 'TLS';
  readonly remote: SipEndpoint;
  readonly local: SipEndpoint;
  readonly closed: boolean;
  send(data: Buffer): Promise<void>;
  /** Ends the connection after pending writes; idempotent. */
  close(): void;
}

/** Where an incoming message came from: RFC 3261 18.2.1 needs the packet's source, 18.2.2 the connection. */
export interface MessageSource extends SipEndpoint {
  protocol: TransportProtocol;
  /** The listening point that received it. */
  local: SipEndpoint;
  /** The connection it arrived on (TCP and TLS); responses go back over it (RFC 3261 18.2.2). */
  connection?: Connection;
}

/** How a transport reports upward; the TransportLayer implements it. */
export interface TransportDelegate {
  /** Admission before parsing (per-source rate limiting): false drops the packet. */
  admit?(source: MessageSource): boolean;
  onMessage(outcome: ParseOutcome, source: MessageSource): void;
  /** A datagram above the maximum size was dropped (RFC 3261 18.1.1 leaves it to the receiver). */
  onOversize?(size: number, source: MessageSource): void;
  /** A stream could not be framed: answer `error.status` to `request` when present, then close. */
  onStreamError?(error: SipParseError, request: SipRequest | undefined, source: MessageSource & { connection: Connection }): void;
  /** An inbound TCP/TLS connection over a cap was reset at once (docs/RELIABILITY.md, "Descriptor budget"). */
  onConnectionRefused?(reason: ConnectionRefusal, source: MessageSource): void;
  onError?(error: TransportError): void;
}

/** Options every transport takes. */
export interface TransportOptions {
  /** Address to bind: '0.0.0.0', '127.0.0.1', '::', '::1'... */
  host: string;
  /** Port to bind; 0 picks a free one (tests). */
  port: number;
  /** Largest message accepted, in octets. */
  maxMessageSize: number;
  delegate: TransportDelegate;
}

/** One listening transport. Implementations: UdpTransport, TcpTransport, TlsTransport. */
export interface Transport {
  readonly protocol: TransportProtocol;
  /** The bound address and port (valid after `listen`). */
  readonly local: SipEndpoint;
  /** IPv4 or IPv6, from the bound address. */
  readonly family: 4 | 6;
  listen(): Promise<void>;
  /**
   * Sends bytes to `target`. Stream transports reuse `target.connection` or an open connection to
   * the same address and port, else connect. Rejects with TransportError.
   */
  send(data: Buffer, target: TransportTarget): Promise<Connection | undefined>;
  close(): Promise<void>;
}

/** Strips the IPv4-mapped prefix node reports on dual-stack sockets ("::ffff:192.0.2.1" → "192.0.2.1"). */
export function normalizeAddress(address: string): string {
  return address.startsWith('::ffff:') && address.indexOf('.') > 0 ? address.slice(7) : address.toLowerCase();
}

/** The address family of an IP literal. */
export function familyOf(address: string): 4 | 6 {
  return address.indexOf(':') >= 0 ? 6 : 4;
}
