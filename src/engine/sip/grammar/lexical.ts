/** @module Character classes and small scanners of RFC 3261 section 25.1 shared by the grammar parsers. */
import { SipParseError } from './parse-error.js';

/** Byte flags for the ASCII range; every scanner is a single bounded pass (no regex backtracking). */
const TOKEN = 1;
const ALNUM = 2;
const HOST = 4;
const IPV6 = 8;
const USER = 16;
const PASSWORD = 32;
const PARAM = 64;
const HEADER = 128;

const CLASS = new Uint8Array(128);
function mark(chars: string, flag: number): void {
  for (let i = 0; i < chars.length; i++) CLASS[chars.charCodeAt(i)]! |= flag;
}
const alnum = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
const mark2 = "-_.!~*'()";
mark(alnum, TOKEN | ALNUM | HOST | USER | PASSWORD | PARAM | HEADER);
// RFC 3261 25.1: token = 1*(alphanum / "-" / "." / "!" / "%" / "*" / "_" / "+" / "`" / "'" / "~")
mark("-.!%*_+`'~", TOKEN);
// hostname chars; "_" is not in the ABNF but is common in SRV-style names, so it is tolerated.
mark('-._', HOST);
mark('0123456789abcdefABCDEF:.', IPV6);
// user = 1*( unreserved / escaped / user-unreserved ); user-unreserved = & = + $ , ; ? /
mark(`${mark2}%&=+$,;?/`, USER);
// password = *( unreserved / escaped / & = + $ , )
mark(`${mark2}%&=+$,`, PASSWORD);
// paramchar = param-unreserved / unreserved / escaped; param-unreserved = [ ] / : & + $
mark(`${mark2}%[]/:&+$`, PARAM);
// hnv-unreserved = [ ] / ? : + $
mark(`${mark2}%[]/?:+$`, HEADER);

function allIn(s: string, flag: number): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || (CLASS[c]! & flag) === 0) return false;
  }
  return true;
}

export const isToken = (s: string): boolean => allIn(s, TOKEN);
export const isHostname = (s: string): boolean => allIn(s, HOST);
export const isIpv6Chars = (s: string): boolean => allIn(s, IPV6);
export const isUserChars = (s: string): boolean => allIn(s, USER);
export const isPasswordChars = (s: string): boolean => s.length === 0 || allIn(s, PASSWORD);
export const isParamChars = (s: string): boolean => allIn(s, PARAM);
export const isHeaderChars = (s: string): boolean => s.length === 0 || allIn(s, HEADER);
export const isAlnumCode = (c: number): boolean => c < 128 && (CLASS[c]! & ALNUM) !== 0;

/** SP or HTAB: the only whitespace left once folded lines are joined (RFC 3261 7.3.1). */
export const isWs = (c: number): boolean => c === 0x20 || c === 0x09;

export function skipWs(s: string, i: number): number {
  while (i < s.length && isWs(s.charCodeAt(i))) i++;
  return i;
}

export function trimWs(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && isWs(s.charCodeAt(a))) a++;
  while (b > a && isWs(s.charCodeAt(b - 1))) b--;
  return a === 0 && b === s.length ? s : s.slice(a, b);
}

/**
 * Index just past the closing DQUOTE of the quoted-string starting at `s[i] === '"'`, honouring
 * quoted-pair escapes (RFC 3261 25.1). Throws on an unterminated string (RFC 4475 3.1.2.6).
 */
export function endOfQuoted(s: string, i: number): number {
  for (let j = i + 1; j < s.length; j++) {
    const c = s.charCodeAt(j);
    if (c === 0x5c) j++; // quoted-pair: skip the escaped character
    else if (c === 0x22) return j + 1;
  }
  throw new SipParseError('unterminated quoted string');
}

/** The content of a quoted-string with its quoted-pairs resolved. */
export function unquote(quoted: string): string {
  let out = '';
  for (let j = 1; j < quoted.length - 1; j++) {
    const c = quoted[j]!;
    if (c === '\\' && j + 1 < quoted.length - 1) out += quoted[++j]!;
    else out += c;
  }
  return out;
}

/** A quoted-string for `text`, escaping DQUOTE and backslash (RFC 3261 25.1 quoted-pair). */
export function quote(text: string): string {
  let out = '"';
  for (const ch of text) out += ch === '"' || ch === '\\' ? `\\${ch}` : ch;
  return `${out}"`;
}

/**
 * Splits `s` at every `sep` that is outside quoted strings and angle brackets; used for
 * comma-separated header lists (RFC 3261 7.3.1) and parameter lists. Elements are trimmed.
 */
export function splitOutside(s: string, sep: number): string[] {
  const out: string[] = [];
  let start = 0;
  let angle = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x22) {
      i = endOfQuoted(s, i) - 1;
    } else if (c === 0x3c) {
      angle = true;
    } else if (c === 0x3e) {
      angle = false;
    } else if (c === sep && !angle) {
      out.push(trimWs(s.slice(start, i)));
      start = i + 1;
    }
  }
  out.push(trimWs(s.slice(start)));
  return out;
}

/** Port numbers: 1 to 5 digits, at most 65535. */
export function parsePort(s: string): number {
  if (s.length === 0 || s.length > 5) throw new SipParseError(`bad port "${s.slice(0, 20)}"`);
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const d = s.charCodeAt(i) - 0x30;
    if (d < 0 || d > 9) throw new SipParseError(`bad port "${s}"`);
    n = n * 10 + d;
  }
  if (n > 65535) throw new SipParseError(`port out of range "${s}"`);
  return n;
}
