/** @module serializeMessage: a SipRequest or SipResponse to wire bytes with a correct Content-Length. */
import type { SipMessage } from './sip-message.js';

/**
 * Start line, header fields in order (compact forms already expanded to long names), then
 * Content-Length computed from the body (RFC 3261 18.3: it is always sent, also over UDP, so a
 * peer can detect truncation), the empty line and the body. One allocation per message.
 */
export function serializeMessage(m: SipMessage): Buffer {
  let head = m.kind === 'request' ? `${m.method} ${m.uri} SIP/2.0\r\n` : `SIP/2.0 ${m.status} ${m.reason}\r\n`;
  for (const [name, value] of m.headers.entries()) {
    if (name !== 'Content-Length') head += `${name}: ${value}\r\n`;
  }
  head += `Content-Length: ${m.body.length}\r\n\r\n`;
  const headLength = Buffer.byteLength(head, 'utf8');
  const out = Buffer.allocUnsafe(headLength + m.body.length);
  out.write(head, 0, 'utf8');
  m.body.copy(out, headLength);
  return out;
}
