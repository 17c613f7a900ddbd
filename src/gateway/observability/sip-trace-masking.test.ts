import t from 'tap';
import { maskSipMessage, sipCallIdOf } from './sip-trace-masking.js';

const INVITE = [
  'INVITE sip:+15550100@gw.example.com SIP/2.0',
  'Via: SIP/2.0/UDP 192.0.2.1:5060;branch=z9hG4bK776asdhds',
  'Call-ID: a84b4c76e66710@pc33.example.com',
  'Proxy-Authorization: Digest username="acme", realm="gw", nonce="dcd98b7102dd2f0e", uri="sip:+15550100@gw.example.com", response="6629fae49393a05397450978507c4ef1", algorithm=MD5',
  'Content-Type: application/sdp',
  '',
  'v=0',
  'm=audio 49170 RTP/SAVP 0',
  'a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR|2^20|1:32',
  'a=crypto:2 AES_CM_128_HMAC_SHA1_32 inline:NzB4d1BINUAvLEw6UzF3WSJ+PSdFcGdUJShpX1Zj',
  '',
].join('\r\n');

t.test('RFC 4568 §9.1: the key||salt of every a=crypto line is masked, its lifetime and MKI kept, the length unchanged', (t) => {
  const masked = maskSipMessage(INVITE);
  t.notMatch(masked, 'PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR');
  t.notMatch(masked, 'NzB4d1BINUAvLEw6UzF3WSJ+PSdFcGdUJShpX1Zj');
  t.match(masked, `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${'*'.repeat(40)}|2^20|1:32`);
  t.equal(masked.length, INVITE.length);
  t.end();
});

t.test('RFC 3261 §22.4: the digest response of Authorization and Proxy-Authorization is masked, the rest of the header kept', (t) => {
  const masked = maskSipMessage(INVITE);
  t.notMatch(masked, '6629fae49393a05397450978507c4ef1');
  t.match(masked, `response="${'*'.repeat(32)}"`);
  t.match(masked, 'username="acme", realm="gw", nonce="dcd98b7102dd2f0e"');
  const bye = 'BYE sip:a@b SIP/2.0\r\nauthorization: Digest username="x", response=abc123, nonce="n"\r\n\r\n';
  t.match(maskSipMessage(bye), 'response=******, nonce="n"');
  t.end();
});

t.test('a message with nothing secret is kept as it is; a body word "response=" outside those headers too', (t) => {
  const text = 'SIP/2.0 200 OK\r\nCall-ID: x\r\nContent-Length: 12\r\n\r\nresponse=abc';
  t.equal(maskSipMessage(text), text);
  t.end();
});

t.test('RFC 3261 §20.8: the Call-ID is read from its long or compact (i) form, never from the body', (t) => {
  t.equal(sipCallIdOf(INVITE), 'a84b4c76e66710@pc33.example.com');
  t.equal(sipCallIdOf('ACK sip:a@b SIP/2.0\r\ni: short-form\r\n\r\n'), 'short-form');
  t.equal(sipCallIdOf('OPTIONS sip:a@b SIP/2.0\r\nVia: x\r\n\r\nCall-ID: in-body'), null);
  t.end();
});
