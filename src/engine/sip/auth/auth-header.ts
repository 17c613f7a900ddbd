/**
 * @module Parsing and formatting of the Digest challenge and credentials headers (RFC 2617 §3.2.1,
 * §3.2.2; RFC 3261 §22.4): WWW-Authenticate, Proxy-Authenticate, Authorization, Proxy-Authorization.
 */

/** A parsed `Digest` challenge or credentials: lowercase parameter names, unquoted values. */
export interface AuthParams {
  scheme: string;
  params: Map<string, string>;
}

/**
 * Parses `Digest realm="a", nonce="b", qop="auth,auth-int"`. Returns undefined on malformed text
 * (a protocol outcome, not an exception). Quoted values may contain commas and `\"` escapes.
 */
export function parseAuthParams(value: string): AuthParams | undefined {
  const m = /^\s*([!-~]+)\s+/.exec(value);
  if (!m?.[1]) return undefined;
  const params = new Map<string, string>();
  let i = m[0].length;
  const s = value;
  while (i < s.length) {
    while (i < s.length && (s[i] === ',' || s[i] === ' ' || s[i] === '\t')) i++;
    if (i >= s.length) break;
    const eq = s.indexOf('=', i);
    if (eq < 0) return undefined;
    const name = s.slice(i, eq).trim().toLowerCase();
    i = eq + 1;
    while (s[i] === ' ' || s[i] === '\t') i++;
    let val = '';
    if (s[i] === '"') {
      i++;
      while (i < s.length && s[i] !== '"') {
        if (s[i] === '\\' && i + 1 < s.length) i++;
        val += s[i];
        i++;
      }
      if (s[i] !== '"') return undefined;
      i++;
    } else {
      const end = s.indexOf(',', i);
      val = s.slice(i, end < 0 ? s.length : end).trim();
      i = end < 0 ? s.length : end;
    }
    if (!name) return undefined;
    params.set(name, val);
  }
  return { scheme: m[1], params };
}

/** Quotes a value for a header, escaping `"` and `\`. */
export function quote(v: string): string {
  return `"${v.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/** Formats `Digest a="b", c=d`: values in `unquoted` are written bare (algorithm, qop, nc, stale). */
export function formatAuthParams(scheme: string, params: readonly (readonly [string, string])[], unquoted: ReadonlySet<string>): string {
  return `${scheme} ${params.map(([k, v]) => `${k}=${unquoted.has(k) ? v : quote(v)}`).join(', ')}`;
}

/** Parameters written without quotes in credentials (RFC 2617 §3.2.2 grammar). */
export const UNQUOTED_PARAMS: ReadonlySet<string> = new Set(['algorithm', 'qop', 'nc', 'stale']);
