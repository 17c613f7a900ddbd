/** @module Dialog construction, route sets, request building and CSeq rules (RFC 3261 §12). */
import t from 'tap';
import { testRequest, testResponse } from '../../../../test/support/sip-messages.js';
import { Dialog } from './dialog.js';

t.test('RFC 3261 12.1.2: the UAC route set is the reversed Record-Route; target from Contact; loose routing', (t) => {
  const inv = testRequest({ cseq: 5 });
  const ok = testResponse(inv, 200, 'remote');
  ok.headers.append('Record-Route', '<sip:p1.example;lr>');
  ok.headers.append('Record-Route', '<sip:p2.example;lr>');
  ok.headers.append('Contact', '<sip:bob@192.0.2.2:5070>');
  const d = Dialog.fromUac(inv, ok);
  t.same(d.routeSet, ['<sip:p2.example;lr>', '<sip:p1.example;lr>']);
  t.equal(d.remoteTarget, 'sip:bob@192.0.2.2:5070');
  t.equal(d.state, 'Confirmed');
  const bye = d.createRequest('BYE');
  t.equal(bye.uri, 'sip:bob@192.0.2.2:5070', 'loose routing: Request-URI is the remote target');
  t.same(bye.headers.getAll('Route'), ['<sip:p2.example;lr>', '<sip:p1.example;lr>']);
  t.equal(bye.cseq.seq, 6, '12.2.1.1: CSeq increases by one');
  t.equal(bye.from.tag, 'ftag');
  t.equal(bye.to.tag, 'remote');
  t.equal(d.nextHopUri(), 'sip:p2.example;lr');
  const ack = d.createRequest('ACK', 5);
  t.equal(ack.cseq.seq, 5, 'ACK keeps the INVITE CSeq');
  t.end();
});

t.test('RFC 3261 12.2.1.1: a strict first route becomes the Request-URI, the remote target the last Route', (t) => {
  const inv = testRequest();
  const ok = testResponse(inv, 200, 'r');
  ok.headers.append('Record-Route', '<sip:strict.example>');
  ok.headers.append('Contact', '<sip:bob@192.0.2.2>');
  const req = Dialog.fromUac(inv, ok).createRequest('INFO');
  t.equal(req.uri, 'sip:strict.example');
  t.same(req.headers.getAll('Route'), ['<sip:bob@192.0.2.2>']);
  t.end();
});

t.test('RFC 3261 12.1.1 / 12.2.2: UAS dialog keeps Record-Route order; lower CSeq is out of order; target refresh', (t) => {
  const inv = testRequest({ cseq: 10, extra: [['Record-Route', '<sip:p1.example;lr>, <sip:p2.example;lr>']] });
  const d = Dialog.fromUas(inv, 'mine', 'Confirmed');
  t.same(d.routeSet, ['<sip:p1.example;lr>', '<sip:p2.example;lr>']);
  t.equal(d.remoteTarget, 'sip:alice@192.0.2.1:5060');
  t.equal(d.id, 'call-1@192.0.2.1|mine|ftag');
  t.ok(d.acceptRemoteCSeq(testRequest({ method: 'INFO', cseq: 11, toTag: 'mine' })));
  t.notOk(d.acceptRemoteCSeq(testRequest({ method: 'INFO', cseq: 9, toTag: 'mine' })), 'lower CSeq refused (500)');
  t.notOk(d.acceptRemoteCSeq(testRequest({ method: 'INFO', cseq: 11, toTag: 'mine' })), 'equal CSeq refused (500)');
  t.equal(d.remoteSeq, 11, 'a refused request does not move the remote sequence number');
  t.ok(d.acceptRemoteCSeq(testRequest({ method: 'ACK', cseq: 10, toTag: 'mine' })), 'ACK keeps its INVITE CSeq');
  const reinvite = testRequest({ cseq: 12, toTag: 'mine' });
  reinvite.headers.set('Contact', '<sip:alice@198.51.100.7:5062>');
  d.refreshTarget(reinvite.headers);
  t.equal(d.remoteTarget, 'sip:alice@198.51.100.7:5062');
  t.end();
});
