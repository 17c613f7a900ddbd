import t from 'tap';
import { parseMessage } from '../messages/message-parser.js';
import type { SipResponse } from '../messages/sip-message.js';
import { redirectTargets } from './redirect.js';

function response(status: number, contacts: string[]): SipResponse {
  const text = [
    `SIP/2.0 ${status} Redirected`,
    'Via: SIP/2.0/UDP 192.0.2.1:5060;branch=z9hG4bKredir1',
    'From: <sip:+15550100@gw.example>;tag=a1',
    'To: <sip:+15550199@carrier.example>;tag=b2',
    'Call-ID: redirect-1',
    'CSeq: 1 INVITE',
    ...contacts.map((c) => `Contact: ${c}`),
    'Content-Length: 0',
    '', '',
  ].join('\r\n');
  const parsed = parseMessage(Buffer.from(text));
  if (!parsed.ok || !('status' in parsed.message)) throw new Error('not a response');
  return parsed.message;
}

t.test('RFC 3261 8.1.3.4 and 20.10: the Contacts of a 3xx, highest q first, ties in order', (t) => {
  t.same(redirectTargets(response(302, ['<sip:+15550123@carrier.example>'])), ['sip:+15550123@carrier.example']);
  t.same(redirectTargets(response(300, ['<sip:a@x.example>;q=0.5', '<sip:b@x.example>;q=0.9, <sip:c@x.example>', '<sip:d@x.example>;q=0.9'])),
    ['sip:c@x.example', 'sip:b@x.example', 'sip:d@x.example', 'sip:a@x.example'], 'no q is 1.0; equal q keeps the order given');
  t.same(redirectTargets(response(301, ['"Moved" <sips:+15550123@y.example:5061;transport=tls>'])), ['sips:+15550123@y.example:5061;transport=tls']);
  t.end();
});

t.test('RFC 3261 21.3: 305 and 380 name no new target; non-3xx responses have none', (t) => {
  t.same(redirectTargets(response(305, ['<sip:proxy.example>'])), [], '305 Use Proxy is not followed');
  t.same(redirectTargets(response(380, ['<sip:service.example>'])), []);
  t.same(redirectTargets(response(486, ['<sip:a@x.example>'])), []);
  t.same(redirectTargets(response(302, [])), [], 'a 3xx without Contact');
  t.end();
});

t.test('what a redirect may not carry is dropped: headers, a password, maddr; other schemes are skipped', (t) => {
  t.same(redirectTargets(response(302, ['<sip:bob:secret@x.example;maddr=203.0.113.9;user=phone?Replaces=abc%40d&Subject=x>'])), ['sip:bob@x.example;user=phone']);
  t.same(redirectTargets(response(302, ['<tel:+15550123>', '<mailto:a@x.example>', '<sip:ok@x.example>'])), ['sip:ok@x.example']);
  t.end();
});
