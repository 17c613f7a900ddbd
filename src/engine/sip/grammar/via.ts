/** @module The Via header value (RFC 3261 20.42, 18.2.1; RFC 3581 rport), parsed and formatted. */
import { SipParseError } from './parse-error.js';
import { isToken, isWs, skipWs, trimWs } from './lexical.js';
import { formatParams, parseParams, type Params } from './params.js';
import { formatHost, parseHostPort } from './uri.js';

/** One via-parm. `branch`, `received` and `rport` mirror `params`; when formatting, the fields win. */
export interface Via {
  /** Transport from sent-protocol, upper-cased: UDP, TCP, TLS, SCTP, WS... */
  protocol: 'UDP' | 'TCP' | 'TLS' | (string & NonNullable<unknown>);
  /** Host of sent-by, IPv6 without brackets. */
  host: string;
  port?: number;
  params: Params;
  branch?: string;
  received?: string;
  /** RFC 3581: `null` (or `true`) = present without value, a number once filled in by the server. */
  rport?: number | null | true;
}

/** RFC 3261 8.1.1.7: branches of RFC 3261 clients start with this magic cookie. */
export const BRANCH_MAGIC_COOKIE = 'z9hG4bK';

/**
 * Parses one via-parm: `SIP / 2.0 / transport LWS sent-by *(;param)`. LWS is allowed around each
 * `/` (RFC 3261 25.1 SLASH), as RFC 4475 3.1.1.1 exercises.
 */
export function parseVia(s: string): Via {
  let i = skipWs(s, 0);
  const [name, i1] = readToken(s, i);
  if (name.toUpperCase() !== 'SIP') throw new SipParseError('Via protocol is not SIP');
  i = expectSlash(s, i1);
  const [version, i2] = readToken(s, i);
  if (version.length === 0) throw new SipParseError('Via without version');
  i = expectSlash(s, i2);
  const [transport, i3] = readToken(s, i);
  if (transport.length === 0) throw new SipParseError('Via without transport');
  i = skipWs(s, i3);
  if (i === i3) throw new SipParseError('Via without LWS before sent-by');
  const via: Via = { protocol: transport.toUpperCase(), host: '', params: new Map() };
  i = parseHostPortWs(s, i, via);
  via.params = parseParams(s.slice(i));
  applyKnownParams(via);
  return via;
}

/** sent-by with LWS allowed around ":" and before ";" (RFC 3261 25.1 COLON and SEMI). Returns the index of ";". */
function parseHostPortWs(s: string, i: number, via: Via): number {
  let end = i;
  while (end < s.length && s.charCodeAt(end) !== 0x3b) end++;
  let sentBy = trimWs(s.slice(i, end));
  // LWS around the colons goes; split and trim rather than /[ \t]*:[ \t]*/g, which backtracks
  // quadratically over a long run of blanks with no colon after it.
  if (sentBy.indexOf(' ') >= 0 || sentBy.indexOf('\t') >= 0) sentBy = sentBy.split(':').map(trimWs).join(':');
  if (sentBy.length === 0) throw new SipParseError('Via without sent-by');
  if (/[ \t]/.test(sentBy)) throw new SipParseError('whitespace inside Via sent-by');
  if (parseHostPort(sentBy, 0, via, false) !== sentBy.length) throw new SipParseError('bad Via sent-by');
  return end;
}

function applyKnownParams(via: Via): void {
  const branch = via.params.get('branch');
  if (branch) via.branch = branch;
  const received = via.params.get('received');
  if (received) via.received = received;
  if (via.params.has('rport')) {
    const r = via.params.get('rport');
    if (r === null || r === undefined) via.rport = null;
    else if (/^[0-9]{1,5}$/.test(r) && Number(r) <= 65535) via.rport = Number(r);
    else throw new SipParseError('bad rport');
  }
}

function readToken(s: string, i: number): [string, number] {
  let j = i;
  while (j < s.length && !isWs(s.charCodeAt(j)) && s.charCodeAt(j) !== 0x2f) j++;
  const tok = s.slice(i, j);
  if (tok.length > 0 && !isToken(tok)) throw new SipParseError('bad token in Via');
  return [tok, j];
}

function expectSlash(s: string, i: number): number {
  const j = skipWs(s, i);
  if (s.charCodeAt(j) !== 0x2f) throw new SipParseError('expected "/" in Via');
  return skipWs(s, j + 1);
}

/** `SIP/2.0/UDP host:port;params`; the branch/received/rport fields override `params`. */
export function formatVia(v: Via): string {
  const params: Params = new Map(v.params);
  if (v.branch !== undefined) params.set('branch', v.branch);
  if (v.received !== undefined) params.set('received', v.received);
  if (v.rport !== undefined) params.set('rport', typeof v.rport === 'number' ? String(v.rport) : null);
  const port = v.port !== undefined ? `:${v.port}` : '';
  return `SIP/2.0/${v.protocol} ${formatHost(v.host)}${port}${formatParams(params)}`;
}
