/**
 * @module What a SIP trace never keeps (docs/SECURITY.md, docs/API.md "SIP trace of a call"): the
 * SRTP master keys of SDP `a=crypto` lines (RFC 4568 §9.1 key-params) and the digest `response`
 * of `Authorization` and `Proxy-Authorization` (RFC 3261 §22.4, RFC 2617 §3.2.2), which a
 * dictionary attack can turn back into the password. Each is replaced by as many `*`, so lengths
 * (and Content-Length) stay true.
 */

const stars = (s: string): string => '*'.repeat(s.length);

/** RFC 4568 §9.1: `inline:` key||salt, up to the lifetime or MKI (`|`), the next key (`;`) or the end. */
const CRYPTO_LINE = /^a=crypto:[^\r\n]*$/gim;
const INLINE_KEY = /(inline:)([^|;\s]+)/gi;
/** A header line of either authorization header (folded continuations are unfolded by our parser before it is sent). */
const AUTH_LINE = /^(?:proxy-)?authorization[ \t]*:[^\r\n]*$/gim;
const DIGEST_RESPONSE = /(\bresponse[ \t]*=[ \t]*)("[^"]*"|[^,\s]+)/gi;

export function maskSipMessage(text: string): string {
  return text
    .replace(CRYPTO_LINE, (line) => line.replace(INLINE_KEY, (_m, prefix: string, key: string) => prefix + stars(key)))
    .replace(AUTH_LINE, (line) => line.replace(DIGEST_RESPONSE, (_m, prefix: string, value: string) =>
      prefix + (value.startsWith('"') ? `"${stars(value.slice(1, -1))}"` : stars(value))));
}

/** The Call-ID of a SIP message (RFC 3261 §20.8, compact form `i`), from its header section; null without one. */
export function sipCallIdOf(text: string): string | null {
  const end = text.indexOf('\r\n\r\n');
  const head = end < 0 ? text : text.slice(0, end);
  const match = /\r\n(?:call-id|i)[ \t]*:[ \t]*([^\r\n]+)/i.exec(head);
  return match ? match[1]!.trim() : null;
}
