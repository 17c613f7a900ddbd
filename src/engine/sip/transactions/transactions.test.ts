/** @module Behaviour of the four transaction classes over an in-memory sender and a FakeClock. */
import t from 'tap';
import { FakeClock } from '../../../common/clock.js';
import { testRequest, testResponse, RecordingSender } from '../../../../test/support/sip-messages.js';
import { SipRequest } from '../messages/sip-message.js';
import { InviteClientTransaction } from './invite-client-transaction.js';
import { InviteServerTransaction } from './invite-server-transaction.js';
import { NonInviteClientTransaction } from './non-invite-client-transaction.js';
import { NonInviteServerTransaction } from './non-invite-server-transaction.js';
import { serverTransactionKey, clientKeyOfResponse, inviteKeyOfCancel } from './transaction-key.js';

t.test('RFC 3261 17.1.1.2: Timer A retransmits INVITE at 500, 1000, 2000 ms...; Timer B times out at 64*T1', (t) => {
  const clock = new FakeClock();
  const sender = new RecordingSender();
  const events: string[] = [];
  const tx = new InviteClientTransaction(testRequest(), sender, { onTimeout: () => events.push('timeout'), onTerminated: () => events.push('terminated') }, { clock });
  tx.start();
  t.equal(sender.sent.length, 1);
  clock.advance(500);
  t.equal(sender.sent.length, 2);
  clock.advance(1000);
  t.equal(sender.sent.length, 3);
  clock.advance(2000);
  t.equal(sender.sent.length, 4);
  clock.advance(32_000 - 3500);
  t.same(events, ['terminated', 'timeout']);
  t.equal(tx.state, 'Terminated');
  t.end();
});

t.test('RFC 3261 17.1.1.2: no retransmission over a reliable transport; 1xx stops Timer A', (t) => {
  const clock = new FakeClock();
  const reliable = new RecordingSender(true);
  new InviteClientTransaction(testRequest(), reliable, {}, { clock }).start();
  clock.advance(5000);
  t.equal(reliable.sent.length, 1);
  const udp = new RecordingSender();
  const got: number[] = [];
  const tx = new InviteClientTransaction(testRequest(), udp, { onResponse: (r) => got.push(r.status) }, { clock });
  tx.start();
  tx.receiveResponse(testResponse(tx.request, 180, 'b'));
  clock.advance(60_000);
  t.equal(udp.sent.length, 1, 'no retransmission in Proceeding, and Timer B does not apply');
  t.equal(tx.state, 'Proceeding');
  t.same(got, [180]);
  t.end();
});

t.test('RFC 3261 17.1.1.3: a non-2xx final is ACKed inside the transaction, retransmits re-ACKed, TU sees it once', (t) => {
  const clock = new FakeClock();
  const sender = new RecordingSender();
  const got: number[] = [];
  const tx = new InviteClientTransaction(testRequest({ extra: [['Route', '<sip:proxy.example;lr>']] }), sender, { onResponse: (r) => got.push(r.status) }, { clock });
  tx.start();
  const busy = testResponse(tx.request, 486, 'b');
  tx.receiveResponse(busy);
  tx.receiveResponse(busy);
  t.same(sender.trace, ['INVITE', 'ACK', 'ACK']);
  const ack = sender.sent[1];
  t.ok(ack instanceof SipRequest, 'the ACK is a request');
  if (ack instanceof SipRequest) {
    t.equal(ack.uri, tx.request.uri);
    t.equal(ack.cseq.seq, 1);
    t.equal(ack.cseq.method, 'ACK');
    t.equal(ack.to.tag, 'b');
    t.equal(ack.topVia.branch, tx.request.topVia.branch);
    t.equal(ack.headers.get('Route'), '<sip:proxy.example;lr>');
  }
  t.same(got, [486]);
  t.equal(tx.state, 'Completed');
  clock.advance(32_000);
  t.equal(tx.state, 'Terminated', 'Timer D');
  t.end();
});

t.test('RFC 6026 7.2: 2xx retransmissions in Accepted go to the TU, Timer M ends it', (t) => {
  const clock = new FakeClock();
  const got: number[] = [];
  const tx = new InviteClientTransaction(testRequest(), new RecordingSender(), { onResponse: (r) => got.push(r.status) }, { clock });
  tx.start();
  const ok = testResponse(tx.request, 200, 'b');
  tx.receiveResponse(ok);
  tx.receiveResponse(ok);
  t.same(got, [200, 200]);
  t.equal(tx.state, 'Accepted');
  clock.advance(32_000);
  t.equal(tx.state, 'Terminated');
  t.end();
});

t.test('RFC 3261 17.1.4: a transport error terminates the client transaction', (t) => {
  const sender = new RecordingSender();
  sender.fail = true;
  const events: string[] = [];
  const tx = new InviteClientTransaction(testRequest(), sender, { onTransportError: () => events.push('error') }, { clock: new FakeClock() });
  tx.start();
  t.equal(tx.state, 'Terminated');
  t.same(events, ['error']);
  t.end();
});

t.test('RFC 3261 17.1.2.2: Timer E doubles to T2, Timer F times out, final response absorbed in Completed', (t) => {
  const clock = new FakeClock();
  const sender = new RecordingSender();
  const events: string[] = [];
  const tx = new NonInviteClientTransaction(testRequest({ method: 'OPTIONS' }), sender, { onTimeout: () => events.push('timeout') }, { clock });
  tx.start();
  for (const step of [500, 1000, 2000, 4000, 4000]) clock.advance(step);
  t.equal(sender.sent.length, 6, 'sent at 0, 0.5, 1.5, 3.5, 7.5, 11.5 s');
  clock.advance(32_000 - 11_500);
  t.same(events, ['timeout']);
  const tx2 = new NonInviteClientTransaction(testRequest({ method: 'BYE' }), new RecordingSender(), { onResponse: (r) => events.push(String(r.status)) }, { clock });
  tx2.start();
  tx2.receiveResponse(testResponse(tx2.request, 100));
  tx2.receiveResponse(testResponse(tx2.request, 200));
  tx2.receiveResponse(testResponse(tx2.request, 200));
  t.same(events.slice(1), ['100', '200']);
  clock.advance(5000);
  t.equal(tx2.state, 'Terminated', 'Timer K = T4');
  t.end();
});

t.test('RFC 3261 17.2.1: INVITE server resends the last response on retransmit, retransmits 486 with Timer G until ACK', (t) => {
  const clock = new FakeClock();
  const sender = new RecordingSender();
  const req = testRequest();
  const tx = new InviteServerTransaction(serverTransactionKey(req), req, sender, {}, { clock });
  tx.respond(testResponse(req, 100));
  tx.receiveRequest(req);
  t.same(sender.trace, ['100', '100']);
  tx.respond(testResponse(req, 486, 'x'));
  clock.advance(500);
  clock.advance(1000);
  t.same(sender.trace, ['100', '100', '486', '486', '486']);
  tx.receiveRequest(testRequest({ method: 'ACK', toTag: 'x' }));
  t.equal(tx.state, 'Confirmed');
  clock.advance(10_000);
  t.equal(sender.sent.length, 5, 'no more retransmission after ACK');
  t.equal(tx.state, 'Terminated', 'Timer I');
  t.end();
});

t.test('RFC 3261 17.2.1: Timer H fires when no ACK arrives', (t) => {
  const clock = new FakeClock();
  const req = testRequest();
  const events: string[] = [];
  const tx = new InviteServerTransaction('k', req, new RecordingSender(), { onTimeout: () => events.push('H') }, { clock });
  tx.respond(testResponse(req, 603, 'x'));
  clock.advance(32_000);
  t.same(events, ['H']);
  t.equal(tx.state, 'Terminated');
  t.end();
});

t.test('RFC 6026 7.1: after a 2xx, INVITE retransmits are absorbed and ACKs go to the TU until Timer L', (t) => {
  const clock = new FakeClock();
  const sender = new RecordingSender();
  const req = testRequest();
  const acks: string[] = [];
  const tx = new InviteServerTransaction('k', req, sender, { onAck: (a) => acks.push(a.method) }, { clock });
  tx.respond(testResponse(req, 200, 'x'));
  tx.receiveRequest(req);
  tx.respond(testResponse(req, 200, 'x'));
  tx.receiveRequest(testRequest({ method: 'ACK', toTag: 'x' }));
  t.same(sender.trace, ['200', '200'], 'the retransmitted INVITE got nothing; the TU resent the 2xx');
  t.same(acks, ['ACK']);
  clock.advance(32_000);
  t.equal(tx.state, 'Terminated');
  t.end();
});

t.test('RFC 3261 17.2.2: non-INVITE server discards retransmits in Trying, resends the final until Timer J', (t) => {
  const clock = new FakeClock();
  const sender = new RecordingSender();
  const req = testRequest({ method: 'BYE', toTag: 'x' });
  const tx = new NonInviteServerTransaction('k', req, sender, {}, { clock });
  tx.receiveRequest(req);
  t.same(sender.trace, []);
  tx.respond(testResponse(req, 200));
  tx.respond(testResponse(req, 500));
  tx.receiveRequest(req);
  t.same(sender.trace, ['200', '200'], 'a second final from the TU is discarded');
  clock.advance(32_000);
  t.equal(tx.state, 'Terminated');
  const reliable = new NonInviteServerTransaction('k2', req, new RecordingSender(true), {}, { clock });
  reliable.respond(testResponse(req, 200));
  clock.advance(0);
  t.equal(reliable.state, 'Terminated', 'Timer J is zero on reliable transports');
  t.end();
});

t.test('RFC 3261 17.2.3: ACK and CANCEL match the INVITE key by branch and sent-by; RFC 2543 fallback', (t) => {
  const inv = testRequest();
  const ack = testRequest({ method: 'ACK', toTag: 'x' });
  const cancel = testRequest({ method: 'CANCEL' });
  t.equal(serverTransactionKey(ack), serverTransactionKey(inv));
  t.not(serverTransactionKey(cancel), serverTransactionKey(inv));
  t.equal(inviteKeyOfCancel(cancel), serverTransactionKey(inv));
  t.not(serverTransactionKey(testRequest({ via: 'SIP/2.0/UDP 192.0.2.9:5060;branch=z9hG4bKtest1' })), serverTransactionKey(inv), 'sent-by differs');
  const old = testRequest({ via: 'SIP/2.0/UDP 192.0.2.1:5060;branch=1234' });
  const oldAck = testRequest({ method: 'ACK', toTag: 'x', via: 'SIP/2.0/UDP 192.0.2.1:5060;branch=1234' });
  t.equal(serverTransactionKey(oldAck), serverTransactionKey(old));
  t.not(serverTransactionKey(testRequest({ via: 'SIP/2.0/UDP 192.0.2.1:5060;branch=1234', cseq: 2 })), serverTransactionKey(old));
  t.equal(clientKeyOfResponse(testResponse(inv, 200)), 'z9hG4bKtest1|INVITE');
  t.end();
});

t.test('RFC 3261 17.2.1 and 17.2.2: a final server transaction keeps only the wire bytes of its final response, resent byte for byte', (t) => {
  const clock = new FakeClock();
  for (const method of ['INVITE', 'BYE'] as const) {
    const sender = new RecordingSender();
    const req = testRequest(method === 'BYE' ? { method, toTag: 'x' } : {});
    const tx = method === 'INVITE'
      ? new InviteServerTransaction('k', req, sender, {}, { clock })
      : new NonInviteServerTransaction('k', req, sender, {}, { clock });
    t.equal(tx.request, req, `${method}: the request is readable until the final response`);
    tx.respond(testResponse(req, method === 'INVITE' ? 486 : 200, 'x'));
    t.throws(() => tx.request, /released/, `${method}: the parsed request is released with the final response`);
    tx.receiveRequest(req);
    const [first, again] = sender.sent;
    t.ok(Buffer.isBuffer(first) && Buffer.isBuffer(again), `${method}: the final goes out, and again, as bytes`);
    t.same(again, first, `${method}: the retransmitted request gets the identical bytes`);
    if (Buffer.isBuffer(first)) t.equal(first.buffer.byteLength, first.length, `${method}: the bytes own their memory (no pooled slab kept alive)`);
  }
  t.end();
});
