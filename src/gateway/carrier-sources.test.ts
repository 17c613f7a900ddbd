/** @module Carrier matching behind trusted edge proxies (docs/ARCHITECTURE.md "Trusted edge proxies"). */
import t from 'tap';
import { SipHeaders, SipRequest } from '../engine/sip/messages/sip-message.js';
import { forwardedAddress, matchingAddress } from './carrier-sources.js';

const invite = (...forwarded: string[]): SipRequest => {
  const h = new SipHeaders();
  for (const f of forwarded) h.append('X-VGW-Source', f);
  return new SipRequest('INVITE', 'sip:+15550100@gw.example', h);
};
const udp = (address: string) => ({ address, port: 5060, protocol: 'UDP' as const });

t.test('forwarded-source values: address, address:port, bracketed IPv6, parameters; anything else is none', (t) => {
  t.equal(forwardedAddress('192.0.2.7'), '192.0.2.7');
  t.equal(forwardedAddress(' 192.0.2.7:5060;transport=udp '), '192.0.2.7');
  t.equal(forwardedAddress('[2001:db8::7]:5060'), '2001:db8::7');
  t.equal(forwardedAddress('2001:db8::7'), '2001:db8::7');
  t.equal(forwardedAddress('carrier.example:5060'), null);
  t.equal(forwardedAddress(''), null);
  t.end();
});

t.test('the header counts only from a trusted proxy, and only when there is exactly one usable copy', (t) => {
  const trusted = ['10.0.0.0/30'];
  t.equal(matchingAddress(udp('10.0.0.2'), invite('198.51.100.7:5060'), trusted), '198.51.100.7', 'trusted proxy: the forwarded source');
  t.equal(matchingAddress(udp('198.51.100.9'), invite('203.0.113.1:5060'), trusted), '198.51.100.9', 'untrusted source: the header is ignored');
  t.equal(matchingAddress(udp('10.0.0.2'), invite(), trusted), '10.0.0.2', 'no header: the proxy itself');
  t.equal(matchingAddress(udp('10.0.0.2'), invite('198.51.100.7', '203.0.113.1'), trusted), '10.0.0.2', 'two copies: ambiguous, the proxy itself');
  t.equal(matchingAddress(udp('10.0.0.2'), invite('not-an-address'), trusted), '10.0.0.2', 'unreadable: the proxy itself');
  t.equal(matchingAddress(udp('10.0.0.2'), invite('198.51.100.7'), []), '10.0.0.2', 'no trusted proxies configured');
  t.end();
});
