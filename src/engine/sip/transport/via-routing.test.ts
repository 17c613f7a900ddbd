import t from 'tap';
import { SipHeaders, SipRequest } from '../messages/sip-message.js';
import { createResponse } from '../messages/response.js';
import { responseTarget, stampReceived } from './via-routing.js';
import type { Connection, MessageSource } from './transport.js';

function request(via: string): SipRequest {
  const h = new SipHeaders().append('Via', `${via}, SIP/2.0/UDP proxy.example.com;branch=z9hG4bKp`).append('Via', 'SIP/2.0/UDP c.example.com;branch=z9hG4bKc')
    .append('From', '<sip:a@x>;tag=1').append('To', '<sip:b@y>').append('Call-ID', 'c').append('CSeq', '1 INVITE');
  return new SipRequest('INVITE', 'sip:b@y', h);
}

const udp: MessageSource = { protocol: 'UDP', address: '192.0.2.7', port: 40123, local: { address: '0.0.0.0', port: 5060 } };

t.test('RFC 3261 18.2.1: received added when sent-by is a domain or another address', (t) => {
  const r = request('SIP/2.0/UDP pc33.example.com;branch=z9hG4bK1');
  t.ok(stampReceived(r, udp));
  t.equal(r.topVia.received, '192.0.2.7');
  t.equal(r.topVia.rport, undefined, 'no rport requested, none added');
  t.equal(r.headers.getAll('Via').length, 3, 'the other Via values are kept');
  t.equal(r.headers.getAll('Via')[1], 'SIP/2.0/UDP proxy.example.com;branch=z9hG4bKp');
  const same = request('SIP/2.0/UDP 192.0.2.7:5060;branch=z9hG4bK2');
  t.notOk(stampReceived(same, udp), 'same address, no rport: untouched');
  t.end();
});

t.test('RFC 3581 4: rport filled with the source port and received always added', (t) => {
  const r = request('SIP/2.0/UDP 192.0.2.7:5060;rport;branch=z9hG4bK3');
  t.ok(stampReceived(r, udp));
  t.same([r.topVia.received, r.topVia.rport], ['192.0.2.7', 40123]);
  t.end();
});

t.test('RFC 3261 18.2.2: response routing by the top Via', (t) => {
  const nat = request('SIP/2.0/UDP 10.0.0.5:5062;rport;branch=z9hG4bK4');
  stampReceived(nat, udp);
  t.same(responseTarget(createResponse(nat, 200)), { protocol: 'UDP', address: '192.0.2.7', port: 40123 }, 'received and rport');
  const plain = request('SIP/2.0/UDP 10.0.0.5:5062;branch=z9hG4bK5');
  stampReceived(plain, udp);
  t.same(responseTarget(createResponse(plain, 200)), { protocol: 'UDP', address: '192.0.2.7', port: 5062 }, 'received and sent-by port');
  const maddr = request('SIP/2.0/UDP 10.0.0.5;maddr=239.1.1.1;branch=z9hG4bK6');
  t.same(responseTarget(createResponse(maddr, 200)), { protocol: 'UDP', address: '239.1.1.1', port: 5060 }, 'maddr');
  const v6 = request('SIP/2.0/UDP [2001:db8::9:1];received=[2001:db8::9:255];branch=z9hG4bK7');
  t.equal(responseTarget(createResponse(v6, 200)).address, '2001:db8::9:255', 'RFC 5118 4.5 bracketed received');
  const connection = { closed: false } as Connection;
  const tcpSource: MessageSource = { protocol: 'TCP', address: '192.0.2.7', port: 50000, local: udp.local, connection };
  const tcp = request('SIP/2.0/TCP client.example.com;branch=z9hG4bK8');
  t.equal(responseTarget(createResponse(tcp, 200), tcpSource).connection, connection, 'reliable: same connection while open');
  const tls = request('SIP/2.0/TLS 192.0.2.7;branch=z9hG4bK9');
  t.same(responseTarget(createResponse(tls, 200)), { protocol: 'TLS', address: '192.0.2.7', port: 5061 }, 'TLS default port 5061');
  t.end();
});
