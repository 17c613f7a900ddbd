/**
 * @module The targets of a redirection (RFC 3261 8.1.3.4, 21.3): the Contact URIs of a 3xx, in
 * order of preference, for the UAC to retry its request to.
 */
import { parseNameAddr } from '../grammar/name-addr.js';
import { formatUri } from '../grammar/uri.js';
import type { SipResponse } from '../messages/sip-message.js';

/**
 * The SIP URIs a 3xx response redirects to, highest q first (equal q in the order given; no q is
 * 1.0). None for 305 Use Proxy and 380 Alternative Service, which name a proxy or a service rather
 * than a new target, and none from Contacts that do not parse or are not sip/sips. What the URI
 * may carry besides its address is dropped: a password, header fields (`?Replaces=...` would
 * rewrite our request) and `maddr` (which would move the request to another host).
 */
export function redirectTargets(response: SipResponse): string[] {
  if (response.status < 300 || response.status > 399 || response.status === 305 || response.status === 380) return [];
  const found: { uri: string; q: number; order: number }[] = [];
  for (const [order, field] of response.headers.getAll('Contact').entries()) {
    let contact;
    try {
      contact = parseNameAddr(field);
    } catch {
      continue;
    }
    const uri = contact.uri;
    if (uri.scheme !== 'sip' && uri.scheme !== 'sips') continue;
    const q = Number(contact.params.get('q') ?? '1');
    const params = new Map([...uri.params].filter(([name]) => name !== 'maddr'));
    const clean = { scheme: uri.scheme, host: uri.host, params, headers: new Map<string, string>(), ...(uri.user === undefined ? {} : { user: uri.user }), ...(uri.port === undefined ? {} : { port: uri.port }) };
    found.push({ uri: formatUri(clean), q: Number.isFinite(q) ? q : 0, order });
  }
  return found.sort((a, b) => b.q - a.q || a.order - b.order).map((f) => f.uri);
}
