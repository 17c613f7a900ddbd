/**
 * @module What the UA core needs from the transport layer: send to a target, receive with the
 * source, and the address to advertise. The transport layer implements it; tests may pair two
 * in memory.
 */
import { parseUri } from '../grammar/uri.js';
import type { SipMessage } from '../messages/sip-message.js';

/** Transport protocols as written in Via. */
export type SipProtocol = 'UDP' | 'TCP' | 'TLS';

/** Where a message came from: responses go back there (RFC 3261 §18.2.2 with RFC 3581 rport). */
export interface SipSource {
  address: string;
  port: number;
  protocol: SipProtocol;
  /** The stream a TCP/TLS message arrived on, to answer on the same connection (§18.2.2). */
  connection?: unknown;
}

/** Where to send: an address and port (already resolved) and a protocol. */
export type SipTarget = SipSource;

/** The transport as the UA core uses it. */
export interface SipTransportPort {
  /** Sends a message; rejects (or throws) on transport failure. */
  send(message: SipMessage, target: SipTarget): void | Promise<void>;
  /** Sends wire bytes already serialized (a kept final response, resent for a retransmitted request). */
  sendRaw(data: Buffer, target: SipTarget): void | Promise<unknown>;
  /** The host and port to write into Via and Contact for this protocol. */
  localAddress(protocol: SipProtocol): { host: string; port: number };
  /** Whether the protocol is reliable (no retransmissions, §17.1.1.2). */
  isReliable(protocol: SipProtocol): boolean;
}

/**
 * The target for a SIP URI with a numeric host (or a name the caller resolved): port 5060 (5061
 * for sips) by default, protocol from the `transport` parameter. RFC 3263 resolution of names is
 * the resolver's job and happens before this point.
 */
export function targetFromUri(uri: string): SipTarget {
  const u = parseUri(uri);
  const t = (u.params.get('transport') ?? '').toUpperCase();
  const protocol: SipProtocol = u.scheme === 'sips' ? 'TLS' : t === 'TCP' ? 'TCP' : t === 'TLS' ? 'TLS' : 'UDP';
  return { address: u.host, port: u.port ?? (protocol === 'TLS' ? 5061 : 5060), protocol };
}
