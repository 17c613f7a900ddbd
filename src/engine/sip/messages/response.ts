/** @module createResponse: a response to a request built per RFC 3261 8.2.6 and 12.1.1. */
import { SipHeaders } from './sip-headers.js';
import { SipResponse, type SipRequest } from './sip-message.js';
import { reasonPhrase } from './reason-phrases.js';

export { REASON_PHRASES, reasonPhrase } from './reason-phrases.js';

export interface CreateResponseOptions {
  /** Local tag for To (RFC 3261 8.2.6.2), added unless the request's To already has a tag. */
  toTag?: string;
  /** Extra header fields, appended in order after the copied ones (Contact, Allow, WWW-Authenticate...). */
  headers?: readonly (readonly [string, string])[];
  body?: Buffer;
  /** Content-Type of `body`. */
  contentType?: string;
}

/** Methods whose 101-299 responses can create a dialog, so Record-Route is mirrored (RFC 3261 12.1.1; RFC 6665; RFC 3515). */
const DIALOG_CREATING = new Set(['INVITE', 'SUBSCRIBE', 'REFER', 'NOTIFY']);

/**
 * RFC 3261 8.2.6.2: the response copies From, Call-ID, CSeq and every Via (in order) from the
 * request, and To, adding the UAS's tag when the request had none (never on 100, 8.2.6.1, which
 * also copies Timestamp). RFC 12.1.1: a dialog-creating 1xx/2xx copies Record-Route.
 */
export function createResponse(req: SipRequest, status: number, reason?: string, opts: CreateResponseOptions = {}): SipResponse {
  const src = req.headers;
  const h = new SipHeaders();
  for (const v of src.getAllFields('Via')) h.append('Via', v);
  const from = src.get('From');
  if (from !== undefined) h.append('From', from);
  const to = src.get('To');
  if (to !== undefined) h.append('To', addTag(to, status, opts.toTag));
  const callId = src.get('Call-ID');
  if (callId !== undefined) h.append('Call-ID', callId);
  const cseq = src.get('CSeq');
  if (cseq !== undefined) h.append('CSeq', cseq);
  if (status === 100) {
    const ts = src.get('Timestamp');
    if (ts !== undefined) h.append('Timestamp', ts);
  }
  if (status > 100 && status < 300 && DIALOG_CREATING.has(req.method)) {
    for (const rr of src.getAllFields('Record-Route')) h.append('Record-Route', rr);
  }
  for (const [name, value] of opts.headers ?? []) h.append(name, value);
  if (opts.body !== undefined && opts.body.length > 0 && opts.contentType !== undefined) h.set('Content-Type', opts.contentType);
  return new SipResponse(status, reason ?? reasonPhrase(status), h, opts.body);
}

function addTag(to: string, status: number, tag: string | undefined): string {
  if (tag === undefined || status === 100 || hasTag(to)) return to;
  return `${to};tag=${tag}`;
}

/** Whether a To value already carries a tag parameter (outside any quoted display name or `< >`). */
function hasTag(to: string): boolean {
  const gt = to.lastIndexOf('>');
  const params = gt >= 0 ? to.slice(gt + 1) : to.slice(Math.max(0, to.indexOf(';')));
  return /;\s*tag\s*=/i.test(params);
}
