/** @module The UAS request checks of RFC 3261 8.2.1 to 8.2.3 that need no dialog or transaction state. */
import { parseUri } from '../grammar/uri.js';
import { trimWs } from '../grammar/lexical.js';
import type { SipRequest } from './sip-message.js';

/** What this UAS supports, compiled once and passed to {@link checkUasRequest}. */
export interface UasCapabilities {
  /** Methods answered (for 405 and the Allow header). */
  methods: readonly string[];
  /** Option tags understood in Require (RFC 3261 8.2.2.3). */
  extensions: readonly string[];
  /** Body types accepted (RFC 3261 8.2.3), lower case, e.g. `application/sdp`. */
  contentTypes: readonly string[];
  /** Body types the UAS answers an INVITE with; checked against Accept (RFC 3261 21.4.7, 406). */
  answerContentTypes?: readonly string[];
}

/** A rejection to send: status, reason is the caller's (standard phrases), extra header fields. */
export interface UasRejection {
  status: 405 | 406 | 415 | 416 | 420 | 501;
  headers: [string, string][];
}

/** Methods of RFC 3261 and its extensions: unknown methods get 501, known unsupported ones 405. */
const KNOWN_METHODS = new Set([
  'INVITE', 'ACK', 'BYE', 'CANCEL', 'OPTIONS', 'REGISTER', 'PRACK', 'SUBSCRIBE', 'NOTIFY', 'PUBLISH', 'INFO',
  'REFER', 'MESSAGE', 'UPDATE',
]);

/**
 * Returns the response a UAS must send before processing `req`, or undefined to go on.
 * Order follows RFC 3261 8.2: method (8.2.1), Request-URI scheme (8.2.2.1, 416), Require
 * (8.2.2.3, 420; never for ACK or CANCEL), Content-Type and Content-Encoding (8.2.3, 415), and
 * for INVITE the Accept header against the answer types (406).
 */
export function checkUasRequest(req: SipRequest, caps: UasCapabilities): UasRejection | undefined {
  if (!caps.methods.includes(req.method)) {
    if (!KNOWN_METHODS.has(req.method)) return { status: 501, headers: [] };
    return { status: 405, headers: [['Allow', caps.methods.join(', ')]] };
  }
  const scheme = parseUri(req.uri).scheme;
  if (scheme !== 'sip' && scheme !== 'sips' && scheme !== 'tel') return { status: 416, headers: [] };
  if (req.method !== 'ACK' && req.method !== 'CANCEL') {
    const unsupported = req.headers.getAll('Require').filter((tag) => !caps.extensions.includes(tag.toLowerCase()));
    if (unsupported.length > 0) return { status: 420, headers: [['Unsupported', unsupported.join(', ')]] };
  }
  const contentType = req.headers.get('Content-Type');
  const encodings = req.headers.getAll('Content-Encoding').map((e) => e.toLowerCase());
  const badEncoding = encodings.some((e) => e !== 'identity');
  if ((req.body.length > 0 && contentType !== undefined && !caps.contentTypes.includes(mediaType(contentType))) || badEncoding) {
    return {
      status: 415,
      headers: [['Accept', caps.contentTypes.join(', ')], ['Accept-Encoding', 'identity']],
    };
  }
  if (req.method === 'INVITE' && caps.answerContentTypes && req.headers.has('Accept')) {
    const accepted = req.headers.getAll('Accept').map(mediaType);
    const ok = caps.answerContentTypes.some((t) => accepted.some((a) => mediaMatches(a, t)));
    if (!ok) return { status: 406, headers: [['Accept', caps.answerContentTypes.join(', ')]] };
  }
  return undefined;
}

/** `type/subtype` of a media-type value, parameters dropped, lower case. */
export function mediaType(value: string): string {
  const semi = value.indexOf(';');
  return trimWs(semi < 0 ? value : value.slice(0, semi)).toLowerCase().replace(/\s*\/\s*/, '/');
}

function mediaMatches(range: string, type: string): boolean {
  if (range === '*/*' || range === type) return true;
  return range.endsWith('/*') && type.startsWith(range.slice(0, -1));
}
