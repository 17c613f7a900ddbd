/** @module SIP URI equality per RFC 3261 19.1.4 (dialog route sets, registrar bindings, loop checks). */
import { unescapeUri, type SipUri } from './uri.js';

/** Parameters that make two URIs differ when either one has them (RFC 3261 19.1.4). */
const SIGNIFICANT = ['user', 'ttl', 'method', 'maddr', 'transport'] as const;

/**
 * RFC 3261 19.1.4: sip and sips never match; userinfo is compared case-sensitively after
 * unescaping, host case-insensitively; an explicit port never equals an absent one; user, ttl,
 * method, maddr and transport must agree when either URI has them; other parameters must agree
 * when both have them; headers must match exactly. Other schemes compare as lower-cased text.
 */
export function uriEquals(a: SipUri, b: SipUri): boolean {
  if (a.scheme !== b.scheme) return false;
  if (a.scheme !== 'sip' && a.scheme !== 'sips') {
    return (a.opaque ?? a.host).toLowerCase() === (b.opaque ?? b.host).toLowerCase() && paramsAgree(a, b);
  }
  if (unescapeOpt(a.user) !== unescapeOpt(b.user) || unescapeOpt(a.password) !== unescapeOpt(b.password)) return false;
  if (a.host.toLowerCase() !== b.host.toLowerCase() || a.port !== b.port) return false;
  for (const name of SIGNIFICANT) {
    if (a.params.has(name) !== b.params.has(name)) return false;
  }
  if (!paramsAgree(a, b)) return false;
  if (a.headers.size !== b.headers.size) return false;
  for (const [name, value] of a.headers) {
    const other = [...b.headers].find(([n]) => n.toLowerCase() === name.toLowerCase());
    if (!other || unescapeUri(other[1]) !== unescapeUri(value)) return false;
  }
  return true;
}

/** Parameters present in both compare case-insensitively after unescaping. */
function paramsAgree(a: SipUri, b: SipUri): boolean {
  for (const [name, value] of a.params) {
    if (!b.params.has(name)) continue;
    const other = b.params.get(name) ?? null;
    if (value === null || other === null) {
      if (value !== other) return false;
    } else if (unescapeUri(value).toLowerCase() !== unescapeUri(other).toLowerCase()) {
      return false;
    }
  }
  return true;
}

function unescapeOpt(s: string | undefined): string | undefined {
  return s === undefined ? undefined : unescapeUri(s);
}
