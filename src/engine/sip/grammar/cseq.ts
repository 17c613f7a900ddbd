/** @module The CSeq header value (RFC 3261 20.16) and other scalar header values. */
import { SipParseError } from './parse-error.js';
import { isToken, isWs, trimWs } from './lexical.js';

/** Sequence number and method of a CSeq header. */
export interface CSeq {
  seq: number;
  method: string;
}

/** RFC 3261 8.1.1.5: the sequence number MUST be expressible as a 32-bit unsigned integer below 2**31. */
const MAX_CSEQ = 2 ** 31 - 1;

/** Parses `1*DIGIT LWS Method`; overlarge numbers are errors (RFC 4475 3.1.2.4 and 3.1.2.5). */
export function parseCSeq(s: string): CSeq {
  const text = trimWs(s);
  let i = 0;
  while (i < text.length && !isWs(text.charCodeAt(i))) i++;
  const digits = text.slice(0, i);
  const method = trimWs(text.slice(i));
  if (!/^[0-9]{1,10}$/.test(digits)) throw new SipParseError('bad CSeq number');
  const seq = Number(digits);
  if (seq > MAX_CSEQ) throw new SipParseError('CSeq number too large');
  if (i === text.length || !isToken(method)) throw new SipParseError('bad CSeq method');
  return { seq, method };
}

export function formatCSeq(c: CSeq): string {
  return `${c.seq} ${c.method}`;
}

/** Max-Forwards = 1*DIGIT, 0 to 255 (RFC 3261 20.22; RFC 4475 3.1.2.4). */
export function parseMaxForwards(s: string): number {
  const text = trimWs(s);
  if (!/^[0-9]{1,5}$/.test(text)) throw new SipParseError('bad Max-Forwards');
  const n = Number(text);
  if (n > 255) throw new SipParseError('Max-Forwards above 255');
  return n;
}

/** Content-Length = 1*DIGIT (RFC 3261 20.14); negative or non-numeric values are errors (RFC 4475 3.1.2.3). */
export function parseContentLength(s: string): number {
  const text = trimWs(s);
  if (!/^[0-9]{1,10}$/.test(text)) throw new SipParseError('bad Content-Length');
  return Number(text);
}
