/** @module SIP, SIPS and tel URIs (RFC 3261 19.1, RFC 3966) and other absolute URIs, parsed and formatted. */
import { SipParseError } from './parse-error.js';
import {
  isAlnumCode, isHeaderChars, isHostname, isIpv6Chars, isParamChars, isPasswordChars, isToken,
  isUserChars, parsePort,
} from './lexical.js';
import type { Params } from './params.js';

/**
 * URI scheme. `sip`, `sips` and `tel` are parsed into parts; any other scheme (RFC 4475 3.3.2 and
 * 3.3.4) is kept as `opaque` text so a UAS can answer 416 instead of failing to parse.
 */
export type UriScheme = 'sip' | 'sips' | 'tel' | (string & NonNullable<unknown>);

/**
 * A parsed URI. Text parts keep their %-escapes exactly as received (RFC 3261 19.1.2): decode
 * with {@link unescapeUri} where the meaning matters. `host` has no brackets around IPv6.
 */
export interface SipUri {
  scheme: UriScheme;
  user?: string;
  password?: string;
  /** Host name, IPv4 address or IPv6 address without brackets; the number for tel; '' for other schemes. */
  host: string;
  port?: number;
  /** uri-parameters keyed by lower-cased name. */
  params: Params;
  /** ?name=value headers (RFC 3261 19.1.1), names as received. */
  headers: Map<string, string>;
  /** The text after `scheme:` for schemes other than sip, sips and tel. */
  opaque?: string;
}

const MAX_URI = 8192;

/** Parses a URI or throws {@link SipParseError}. Surrounding whitespace is an error, not trimmed. */
export function parseUri(s: string): SipUri {
  if (s.length > MAX_URI) throw new SipParseError('URI too long');
  const colon = schemeEnd(s);
  const scheme = s.slice(0, colon).toLowerCase();
  const rest = s.slice(colon + 1);
  if (scheme === 'sip' || scheme === 'sips') return parseSipParts(scheme, rest);
  if (scheme === 'tel') return parseTel(rest);
  for (let i = 0; i < rest.length; i++) {
    const c = rest.charCodeAt(i);
    if (c <= 0x20 || c === 0x7f || c === 0x3c || c === 0x3e || c === 0x22) throw new SipParseError('bad character in URI');
  }
  if (rest.length === 0) throw new SipParseError('empty URI');
  return { scheme, host: '', params: new Map(), headers: new Map(), opaque: rest };
}

/** scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ), followed by ":". */
function schemeEnd(s: string): number {
  const first = s.charCodeAt(0);
  if (!(isAlnumCode(first) && first > 0x39)) throw new SipParseError(`bad URI "${s.slice(0, 40)}"`);
  for (let i = 1; i < s.length && i < 64; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x3a) return i;
    if (!(isAlnumCode(c) || c === 0x2b || c === 0x2d || c === 0x2e)) break;
  }
  throw new SipParseError(`bad URI scheme in "${s.slice(0, 40)}"`);
}

function parseSipParts(scheme: 'sip' | 'sips', rest: string): SipUri {
  const uri: SipUri = { scheme, host: '', params: new Map(), headers: new Map() };
  // No "@" can appear unescaped after the userinfo, so the first one ends it (RFC 3261 25.1).
  const at = rest.indexOf('@');
  let i = 0;
  if (at >= 0) {
    const userinfo = rest.slice(0, at);
    const pc = userinfo.indexOf(':');
    const user = pc < 0 ? userinfo : userinfo.slice(0, pc);
    if (!isUserChars(user)) throw new SipParseError('bad user part in URI');
    uri.user = user;
    if (pc >= 0) {
      const password = userinfo.slice(pc + 1);
      if (!isPasswordChars(password)) throw new SipParseError('bad password in URI');
      uri.password = password;
    }
    i = at + 1;
  }
  i = parseHostPort(rest, i, uri);
  if (i < rest.length && rest.charCodeAt(i) === 0x3b) i = parseUriParams(rest, i, uri.params);
  if (i < rest.length && rest.charCodeAt(i) === 0x3f) i = parseUriHeaders(rest, i + 1, uri.headers);
  if (i !== rest.length) throw new SipParseError('trailing characters in URI');
  return uri;
}

/**
 * hostport = host [ ":" port ]; host = hostname / IPv4address / "[" IPv6address "]". Scans up to
 * the first `;` or `?` (or only `;` when `stopAtQuery` is false). Returns the next index.
 */
export function parseHostPort(s: string, i: number, out: { host: string; port?: number }, stopAtQuery = true): number {
  const isStop = (c: number): boolean => c === 0x3b || (stopAtQuery && c === 0x3f);
  let j: number;
  if (s.charCodeAt(i) === 0x5b) {
    j = s.indexOf(']', i);
    if (j < 0) throw new SipParseError('unterminated IPv6 reference');
    const v6 = s.slice(i + 1, j);
    // RFC 5118 4.10: "2001:db8:::192.0.2.1" is tolerated, as the RFC recommends.
    if (!isIpv6Chars(v6) || v6.indexOf(':') < 0) throw new SipParseError('bad IPv6 reference');
    out.host = v6;
    j++;
  } else {
    j = i;
    while (j < s.length) {
      const c = s.charCodeAt(j);
      if (c === 0x3a || isStop(c)) break;
      j++;
    }
    const host = s.slice(i, j);
    if (!isHostname(host)) throw new SipParseError(`bad host "${host.slice(0, 40)}"`);
    out.host = host;
  }
  if (j < s.length && s.charCodeAt(j) === 0x3a) {
    let k = j + 1;
    while (k < s.length && !isStop(s.charCodeAt(k))) k++;
    out.port = parsePort(s.slice(j + 1, k));
    j = k;
  }
  return j;
}

function parseUriParams(s: string, i: number, params: Params): number {
  let j = i;
  while (j < s.length && s.charCodeAt(j) === 0x3b) {
    let k = j + 1;
    while (k < s.length && s.charCodeAt(k) !== 0x3b && s.charCodeAt(k) !== 0x3f) k++;
    const part = s.slice(j + 1, k);
    const eq = part.indexOf('=');
    const name = (eq < 0 ? part : part.slice(0, eq)).toLowerCase();
    const value = eq < 0 ? null : part.slice(eq + 1);
    if (!isParamChars(name) || (value !== null && !isParamChars(value))) throw new SipParseError('bad URI parameter');
    params.set(name, value);
    j = k;
  }
  return j;
}

function parseUriHeaders(s: string, i: number, headers: Map<string, string>): number {
  for (const part of s.slice(i).split('&')) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw new SipParseError('bad URI header');
    const name = part.slice(0, eq);
    const value = part.slice(eq + 1);
    if (!isHeaderChars(name) || !isHeaderChars(value)) throw new SipParseError('bad URI header');
    headers.set(name, value);
  }
  return s.length;
}

/** telephone-subscriber *( ";" par ) (RFC 3966 3); the number is kept in `host`. */
function parseTel(rest: string): SipUri {
  const semi = rest.indexOf(';');
  const number = semi < 0 ? rest : rest.slice(0, semi);
  if (number.length === 0 || !isParamChars(number)) throw new SipParseError('bad tel URI');
  const uri: SipUri = { scheme: 'tel', host: number, params: new Map(), headers: new Map() };
  if (semi >= 0 && parseUriParams(rest, semi, uri.params) !== rest.length) throw new SipParseError('bad tel URI');
  return uri;
}

/** The URI as text. IPv6 hosts get their brackets back. */
export function formatUri(u: SipUri): string {
  if (u.opaque !== undefined && u.scheme !== 'sip' && u.scheme !== 'sips' && u.scheme !== 'tel') {
    return `${u.scheme}:${u.opaque}`;
  }
  let out = `${u.scheme}:`;
  if (u.user !== undefined) out += u.password !== undefined ? `${u.user}:${u.password}@` : `${u.user}@`;
  out += formatHost(u.host);
  if (u.port !== undefined) out += `:${u.port}`;
  for (const [name, value] of u.params) out += value === null ? `;${name}` : `;${name}=${value}`;
  let sep = '?';
  for (const [name, value] of u.headers) {
    out += `${sep}${name}=${value}`;
    sep = '&';
  }
  return out;
}

/** A host as it appears in a URI or Via: IPv6 addresses in brackets. */
export function formatHost(host: string): string {
  return host.indexOf(':') >= 0 && host.charCodeAt(0) !== 0x5b ? `[${host}]` : host;
}

/** Resolves %HH escapes (RFC 3261 19.1.2) as UTF-8; malformed escapes stay as they are. */
export function unescapeUri(s: string): string {
  if (s.indexOf('%') < 0) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    return s.replace(/%([0-9a-fA-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
  }
}

/** Whether `s` is a token (exported for header and method checks). */
export const isSipToken = isToken;
