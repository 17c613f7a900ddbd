/** @module name-addr and addr-spec header values (From, To, Contact, Route, Record-Route; RFC 3261 20.10). */
import { SipParseError } from './parse-error.js';
import { endOfQuoted, isWs, quote, skipWs, trimWs, unquote } from './lexical.js';
import { formatParams, parseParams, type Params } from './params.js';
import { formatUri, parseUri, type SipUri } from './uri.js';

/** A parsed name-addr (or addr-spec) with its header parameters. */
export interface NameAddr {
  /** Display name with quoted-pairs resolved; undefined when absent. */
  displayName?: string;
  uri: SipUri;
  /** Header parameters (after the URI), lower-cased names. The source of truth when formatting. */
  params: Params;
  /** The `tag` parameter (RFC 3261 19.3), copied from `params` when parsed. */
  tag?: string;
}

/**
 * Parses `[display-name] <URI> *(;param)` or `addr-spec *(;param)`. In the addr-spec form every
 * `;` after the URI starts a header parameter (RFC 3261 20.10). Liberal where RFC 4475 allows it:
 * unquoted display names with non-token characters (3.1.2.15) and LWS inside `< >` (3.1.2.14).
 */
export function parseNameAddr(s: string): NameAddr {
  const text = trimWs(s);
  if (text.length === 0) throw new SipParseError('empty address');
  let displayName: string | undefined;
  let uriText: string;
  let rest: string;
  let i: number;
  if (text.charCodeAt(0) === 0x22) {
    i = endOfQuoted(text, 0);
    displayName = unquote(text.slice(0, i));
    i = skipWs(text, i);
    if (text.charCodeAt(i) !== 0x3c) throw new SipParseError('expected "<" after display name');
  } else {
    const lt = text.indexOf('<');
    if (lt >= 0) {
      const name = trimWs(text.slice(0, lt));
      if (name.indexOf('"') >= 0 || name.indexOf('>') >= 0) throw new SipParseError('bad display name');
      if (name.length > 0) displayName = name;
      i = lt;
    } else {
      i = -1;
    }
  }
  if (i >= 0) {
    const gt = text.indexOf('>', i);
    if (gt < 0) throw new SipParseError('missing ">"');
    uriText = trimWs(text.slice(i + 1, gt));
    rest = text.slice(gt + 1);
  } else {
    let end = 0;
    while (end < text.length && text.charCodeAt(end) !== 0x3b && !isWs(text.charCodeAt(end))) end++;
    uriText = text.slice(0, end);
    rest = text.slice(end);
  }
  const params = parseParams(rest);
  const out: NameAddr = { uri: parseUri(uriText), params };
  if (displayName !== undefined) out.displayName = displayName;
  const tag = params.get('tag');
  if (tag) out.tag = tag;
  return out;
}

/**
 * Formats as name-addr, always with angle brackets (RFC 3261 20.10 requires them when the URI has
 * `,`, `;` or `?`, and they are never wrong). A `tag` field not in `params` is added.
 */
export function formatNameAddr(a: NameAddr): string {
  const name = a.displayName !== undefined && a.displayName.length > 0 ? `${quote(a.displayName)} ` : '';
  let params = formatParams(a.params);
  if (a.tag !== undefined && !a.params.has('tag')) params += `;tag=${a.tag}`;
  return `${name}<${formatUri(a.uri)}>${params}`;
}
