/** @module Header-field parameters (RFC 3261 25.1 generic-param) and their formatting. */
import { SipParseError } from './parse-error.js';
import { endOfQuoted, isToken, splitOutside, trimWs } from './lexical.js';

/** Parameters keyed by lower-cased name (names are case-insensitive, RFC 3261 7.3.1). `null` = no value. */
export type Params = Map<string, string | null>;

/**
 * Most parameters one header value may carry. RFC 3261 sets no limit; real messages carry a
 * handful. A value with tens of thousands (`;a;a;a…` filling a datagram, found by fuzzing) cost
 * about 30 ms per parse, and a message is parsed several times on its way: refused with 400.
 */
export const MAX_PARAMS = 256;

/**
 * Parses `;name[=value]` pairs as they follow a header value: `s` starts at the first `;` (or
 * is empty). LWS is allowed around `;` and `=` (RFC 3261 25.1 SEMI and EQUAL). Values keep their
 * quotes when quoted, so formatting gives back what was received. Empty parameters
 * (`;;`, RFC 4475 3.1.2.1) are errors.
 */
export function parseParams(s: string): Params {
  const params: Params = new Map();
  const rest = trimWs(s);
  if (rest.length === 0) return params;
  if (rest.charCodeAt(0) !== 0x3b) throw new SipParseError(`expected ";" before parameters in "${rest}"`);
  const parts = splitOutside(rest.slice(1), 0x3b);
  if (parts.length > MAX_PARAMS) throw new SipParseError(`more than ${MAX_PARAMS} parameters`);
  for (const part of parts) {
    const eq = part.indexOf('=');
    const name = trimWs(eq < 0 ? part : part.slice(0, eq)).toLowerCase();
    if (!isToken(name)) throw new SipParseError(`bad parameter name "${name}"`);
    if (eq < 0) {
      params.set(name, null);
      continue;
    }
    const value = trimWs(part.slice(eq + 1));
    if (value.length === 0) throw new SipParseError(`empty value for parameter "${name}"`);
    if (value.charCodeAt(0) === 0x22) {
      if (endOfQuoted(value, 0) !== value.length) throw new SipParseError(`bad quoted value for "${name}"`);
    } else if (!isParamValue(value)) {
      throw new SipParseError(`bad value for parameter "${name}"`);
    }
    params.set(name, value);
  }
  return params;
}

/**
 * gen-value = token / host / quoted-string; IPv6 references ("[...]") and bare IPv6 (RFC 5118 4.5)
 * included. `<` and `>` are in neither token nor host, and the list splitter treats them as
 * brackets: accepting one here would let a parameter added after it (a To tag) vanish into it.
 */
function isParamValue(v: string): boolean {
  if (isToken(v)) return true;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    const ok = c === 0x3a || c === 0x5b || c === 0x5d || (c > 0x20 && c < 0x7f && c !== 0x22 && c !== 0x3b && c !== 0x2c && c !== 0x3c && c !== 0x3e);
    if (!ok) return false;
  }
  return true;
}

/** `;name=value` text for a parameter map (empty string for none). */
export function formatParams(params: ReadonlyMap<string, string | null>): string {
  let out = '';
  for (const [name, value] of params) out += value === null ? `;${name}` : `;${name}=${value}`;
  return out;
}
