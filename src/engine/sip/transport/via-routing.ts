/** @module RFC 3261 18.2.1 received stamping with RFC 3581 rport, and RFC 3261 18.2.2 response routing. */
import { stripBrackets } from '../../../common/address-policy.js';
import { formatVia, type Via } from '../grammar/via.js';
import type { SipRequest, SipResponse } from '../messages/sip-message.js';
import { normalizeAddress, type MessageSource, type TransportProtocol, type TransportTarget } from './transport.js';

/**
 * RFC 3261 18.2.1: when the top Via's sent-by host is a domain name or differs from the packet's
 * source address, add `received` with the source address. RFC 3581 4: when `rport` is present
 * without a value, fill it with the source port and add `received` even when equal.
 * Returns true when the Via changed.
 */
export function stampReceived(req: SipRequest, source: MessageSource): boolean {
  const via = req.topVia;
  const sourceAddress = normalizeAddress(source.address);
  const hostDiffers = normalizeAddress(via.host) !== sourceAddress;
  const wantsRport = via.rport === null || via.rport === true;
  if (!hostDiffers && !wantsRport) return false;
  const stamped: Via = { ...via, params: new Map(via.params), received: sourceAddress };
  if (wantsRport) stamped.rport = source.port;
  req.headers.replaceFirstValue('Via', formatVia(stamped));
  return true;
}

const DEFAULT_PORT: Record<TransportProtocol, number> = { UDP: 5060, TCP: 5060, TLS: 5061 };

/**
 * RFC 3261 18.2.2 (with RFC 3581 4): where a response goes, from its top Via.
 * Reliable transports: the connection the request came on while it is open, else `received`
 * (or sent-by) and the sent-by port. Unreliable: `maddr` if present, else `received` with `rport`
 * or the sent-by port, else the sent-by host and port. A sent-by host that is a domain name is
 * returned as is: RFC 3263 section 5 resolution is the caller's (it is rare, since requests
 * with a domain sent-by are always stamped with `received`).
 */
export function responseTarget(res: SipResponse, source?: MessageSource): TransportTarget {
  const via = res.topVia;
  const protocol = toProtocol(via.protocol);
  const port = via.port ?? DEFAULT_PORT[protocol];
  if (protocol !== 'UDP' && source?.connection && !source.connection.closed) {
    return { protocol, address: source.address, port: source.port, connection: source.connection };
  }
  const maddr = via.params.get('maddr');
  if (protocol === 'UDP' && maddr) return { protocol, address: stripBrackets(maddr), port };
  if (via.received !== undefined) {
    // RFC 5118 4.5: `received` may carry an IPv6 reference with brackets.
    const rport = typeof via.rport === 'number' ? via.rport : port;
    return { protocol, address: stripBrackets(via.received), port: rport };
  }
  return { protocol, address: via.host, port };
}

function toProtocol(p: string): TransportProtocol {
  return p === 'TCP' || p === 'TLS' ? p : 'UDP';
}
