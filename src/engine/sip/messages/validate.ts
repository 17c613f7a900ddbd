/** @module Checks a parsed message against RFC 3261 8.1.1 / 8.2 before any layer above sees it. */
import { SipParseError } from '../grammar/parse-error.js';
import { parseUri } from '../grammar/uri.js';
import { parseVia } from '../grammar/via.js';
import { splitList } from './sip-headers.js';
import type { SipMessage } from './sip-message.js';

/** RFC 3261 8.1.1: the header fields every request and response carries (Max-Forwards excepted, see below). */
const REQUIRED = ['Call-ID', 'From', 'To', 'CSeq', 'Via'] as const;

/** Header fields that may appear once only (RFC 3261 7.3.1 and 20: not comma lists). RFC 4475 3.3.8. */
const SINGLE = ['Call-ID', 'From', 'To', 'CSeq', 'Max-Forwards', 'Content-Type'] as const;

/**
 * Returns the reason a message must be rejected (a request with 400) or dropped (a response), or
 * undefined when it is well formed; afterwards the message getters (Via, From, To, CSeq,
 * Max-Forwards, Contact) cannot throw. Max-Forwards is optional on receipt because RFC 2543 peers
 * omit it (RFC 4475 3.4.1); when present it must be 0-255. Unknown URI schemes in From, To and
 * Contact are accepted (RFC 4475 3.3.4); in the Request-URI they are the UAS's 416 to give.
 */
export function validateMessage(m: SipMessage): SipParseError | undefined {
  try {
    for (const name of REQUIRED) if (!m.headers.has(name)) return new SipParseError(`missing ${name}`);
    for (const name of SINGLE) if (m.headers.count(name) > 1) return new SipParseError(`more than one ${name}`);
    if (m.callId.trim().length === 0) return new SipParseError('empty Call-ID');
    for (const field of m.headers.getAllFields('Via')) for (const v of splitList(field)) parseVia(v);
    void m.topVia;
    void m.from;
    void m.to;
    void m.maxForwards;
    void m.contacts;
    const cseq = m.cseq;
    if (m.kind === 'request') return validateRequest(m.method, m.uri, cseq.method);
    return undefined;
  } catch (err) {
    if (err instanceof SipParseError) return err;
    throw err;
  }
}

function validateRequest(method: string, uri: string, cseqMethod: string): SipParseError | undefined {
  // RFC 3261 8.1.1.5 / RFC 4475 3.1.2.17: the CSeq method matches the request method.
  if (cseqMethod !== method) return new SipParseError('CSeq method does not match the request method');
  const ruri = parseUri(uri);
  // RFC 3261 19.1.1 (table 1): headers are not allowed in a Request-URI. RFC 4475 3.1.2.11.
  if ((ruri.scheme === 'sip' || ruri.scheme === 'sips') && ruri.headers.size > 0) {
    return new SipParseError('headers in Request-URI');
  }
  return undefined;
}
