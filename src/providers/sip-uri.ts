/** @module Builds the SIP URI of a platform edge (RFC 3261 §19.1). */
import type { SipTransport } from './provider-adapter.js';

/** Inputs of {@link buildSipUri}. */
export interface SipUriParts {
  /** User part; escaped as RFC 3261 §25.1 `user` requires. */
  user: string;
  host: string;
  transport: SipTransport;
  /** Write the port of the transport (5060, or 5061 for TLS) explicitly, as some edges document. */
  explicitPort?: boolean;
}

// RFC 3261 §25.1: user = 1*( unreserved / escaped / user-unreserved ).
const USER_SAFE = /[A-Za-z0-9\-_.!~*'()&=+$,;?/]/;

/** Percent-escapes every character the `user` production does not allow. */
export function escapeSipUser(user: string): string {
  let out = '';
  for (const ch of user) {
    if (USER_SAFE.test(ch)) out += ch;
    else for (const byte of Buffer.from(ch, 'utf8')) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/**
 * `sip:user@host[:port];transport=x`. TLS keeps the `sip:` scheme with `transport=tls`, the form
 * the platforms document, although RFC 3261 §26.2.2 prefers `sips:`; an explicit host port in
 * `host` (from a config override) wins over `explicitPort`.
 */
export function buildSipUri(parts: SipUriParts): string {
  const hasPort = /:\d+$/.test(parts.host);
  const port = parts.explicitPort && !hasPort ? `:${parts.transport === 'tls' ? 5061 : 5060}` : '';
  return `sip:${escapeSipUser(parts.user)}@${parts.host}${port};transport=${parts.transport}`;
}
