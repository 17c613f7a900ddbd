/** @module RFC 3263 next-hop resolution for callers: a URI to the ordered transport targets to try, and the numeric URI of one. */
import { parseUri } from '../grammar/uri.js';
import type { SipTarget } from '../user-agent-core/transport-port.js';
import type { ServerLocator } from './server-locator.js';

/**
 * Resolves `uri` (a carrier's `sip:`/`sips:` URI, or a name) to the targets to try, in order,
 * each with its transport (RFC 3263 §4: NAPTR, SRV, then A/AAAA; §4.3: the order of the list is
 * the order of failover). An empty list means the URI cannot be reached from here (no records,
 * or only transports we do not run). Pass one target at a time to {@link hopUri} and then to
 * `SipUserAgent.invite({ proxy })`, or let `inviteWithFailover` walk the list.
 */
export async function resolveNextHop(locator: ServerLocator, uri: string): Promise<SipTarget[]> {
  const resolved = await locator.locate(uri);
  return resolved.map((r) => ({ address: r.address, port: r.port, protocol: r.protocol }));
}

/**
 * A numeric SIP URI for a resolved target (`sip:192.0.2.4:5060`, `sip:[2001:db8::1]:5060;transport=tcp`),
 * so the UA's synchronous target resolution sends to exactly that hop without another DNS lookup.
 * TLS keeps the `sip` scheme with `transport=tls` (RFC 3261 §26.2.2: this names the hop, not SIPS end to end).
 */
export function hopUri(target: SipTarget): string {
  const host = target.address.includes(':') ? `[${target.address}]` : target.address;
  const transport = target.protocol === 'UDP' ? '' : `;transport=${target.protocol.toLowerCase()}`;
  return `sip:${host}:${target.port}${transport}`;
}

/**
 * What an address policy checks before a URI is stored: its host (the `maddr` when present, RFC
 * 3263 4) and every address RFC 3263 resolves it to, none when nothing resolves yet; or `invalid`
 * when it is not a `sip:`/`sips:` URI that parses.
 */
export async function locateAddresses(locator: ServerLocator, uri: string): Promise<{ host: string; addresses: string[] } | { invalid: string }> {
  let parsed;
  try {
    parsed = parseUri(uri);
  } catch (err) {
    return { invalid: (err as Error).message };
  }
  if (parsed.scheme !== 'sip' && parsed.scheme !== 'sips') return { invalid: 'not a sip: or sips: URI' };
  if (parsed.host === '') return { invalid: 'no host' };
  const targets = await locator.locate(parsed);
  return { host: parsed.params.get('maddr') ?? parsed.host, addresses: targets.map((t) => t.address) };
}
