/** @module Builders for SIP messages in tests, written as they would arrive on the wire. */
import { SipHeaders, SipRequest, SipResponse } from '../../src/engine/sip/messages/sip-message.js';

export interface TestRequestOptions {
  method?: string;
  uri?: string;
  branch?: string;
  callId?: string;
  cseq?: number;
  fromTag?: string;
  toTag?: string;
  via?: string;
  extra?: [string, string][];
  body?: string;
}

/** A request from alice at 192.0.2.1:5060 to bob, with defaults for every mandatory header. */
export function testRequest(o: TestRequestOptions = {}): SipRequest {
  const method = o.method ?? 'INVITE';
  const h = new SipHeaders();
  h.append('Via', o.via ?? `SIP/2.0/UDP 192.0.2.1:5060;branch=${o.branch ?? 'z9hG4bKtest1'}`);
  h.append('Max-Forwards', '70');
  h.append('From', `<sip:alice@192.0.2.1>;tag=${o.fromTag ?? 'ftag'}`);
  h.append('To', `<sip:bob@192.0.2.2>${o.toTag ? `;tag=${o.toTag}` : ''}`);
  h.append('Call-ID', o.callId ?? 'call-1@192.0.2.1');
  h.append('CSeq', `${o.cseq ?? 1} ${method === 'CANCEL' || method === 'ACK' ? method : method}`);
  h.append('Contact', '<sip:alice@192.0.2.1:5060>');
  for (const [k, v] of o.extra ?? []) h.append(k, v);
  const body = Buffer.from(o.body ?? '');
  h.append('Content-Length', String(body.length));
  return new SipRequest(method, o.uri ?? 'sip:bob@192.0.2.2', h, body);
}

/** A response to `req` with the given status, copying Via, From, To (plus tag), Call-ID, CSeq. */
export function testResponse(req: SipRequest, status: number, toTag?: string): SipResponse {
  const h = new SipHeaders();
  for (const v of req.headers.getAllFields('Via')) h.append('Via', v);
  h.append('From', req.headers.get('From') ?? '');
  const to = req.headers.get('To') ?? '';
  h.append('To', toTag && !/;tag=/.test(to) ? `${to};tag=${toTag}` : to);
  h.append('Call-ID', req.callId);
  h.append('CSeq', req.headers.get('CSeq') ?? '');
  h.append('Content-Length', '0');
  return new SipResponse(status, status === 200 ? 'OK' : 'Reason', h);
}

/** An in-memory sender that records what a transaction writes. */
export class RecordingSender {
  readonly reliable: boolean;
  /** Messages as sent; a server transaction's kept final response arrives as its wire bytes. */
  readonly sent: (SipRequest | SipResponse | Buffer)[] = [];
  fail = false;

  constructor(reliable = false) {
    this.reliable = reliable;
  }

  send(message: SipRequest | SipResponse | Buffer): void {
    if (this.fail) throw new Error('send failed');
    this.sent.push(message);
  }

  /** Short descriptions: method names for requests, status codes for responses (read from the status line of bytes). */
  get trace(): string[] {
    return this.sent.map((m) => {
      if (Buffer.isBuffer(m)) return /^SIP\/2\.0 (\d{3}) /.exec(m.toString('latin1'))?.[1] ?? '?';
      return m.kind === 'request' ? m.method : String(m.status);
    });
  }
}
