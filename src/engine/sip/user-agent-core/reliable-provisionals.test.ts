/** @module RFC 3262 §3 as a UAS: RSeq numbering, retransmission until PRACK, one outstanding at a time, the 64*T1 give-up. */
import t from 'tap';
import { FakeClock } from '../../../common/clock.js';
import { testRequest, testResponse } from '../../../../test/support/sip-messages.js';
import type { SipResponse } from '../messages/sip-message.js';
import { lists100rel, ReliableProvisionals } from './reliable-provisionals.js';

const TIMERS = { T1: 500 };
const INVITE = testRequest({ cseq: 7, extra: [['Require', '100rel']] });

function setup() {
  const clock = new FakeClock();
  const sent: { at: number; status: number; rseq: number; require: string | undefined }[] = [];
  const tx = {
    respond: (r: SipResponse) => sent.push({ at: clock.monotonic(), status: r.status, rseq: Number(r.headers.get('RSeq')), require: r.headers.get('Require') }),
  };
  let timeouts = 0;
  const reliable = new ReliableProvisionals(clock, TIMERS, tx, INVITE, () => timeouts++);
  return { clock, sent, reliable, timeouts: () => timeouts };
}

const prack = (rack: string) => testRequest({ method: 'PRACK', cseq: 8, toTag: 'uas', extra: [['RAck', rack]] });

t.test('RFC 3262 7.1: 100rel is read from Require or Supported among other option tags, in any case', (t) => {
  t.equal(lists100rel(testRequest({ extra: [['Require', 'timer, 100REL']] }), 'Require'), true);
  t.equal(lists100rel(testRequest({ extra: [['Supported', 'timer'], ['Supported', '100rel']] }), 'Supported'), true);
  t.equal(lists100rel(testRequest({ extra: [['Supported', '100rel']] }), 'Require'), false, 'Supported is not Require');
  t.equal(lists100rel(testRequest({ extra: [['Require', '100relx']] }), 'Require'), false, 'a longer tag is another tag');
  t.end();
});

t.test('RFC 3262 3: a reliable provisional carries Require: 100rel and an RSeq below 2**31, resent at T1 doubling until PRACK', (t) => {
  const { clock, sent, reliable, timeouts } = setup();
  reliable.send(testResponse(INVITE, 180, 'uas'));
  t.equal(sent.length, 1, 'sent at once');
  t.equal(sent[0]!.require, '100rel');
  t.ok(sent[0]!.rseq >= 1 && sent[0]!.rseq < 2 ** 31, `RSeq ${sent[0]!.rseq} in range`);
  clock.advance(3600);
  t.same(sent.map((s) => s.at), [0, 500, 1500, 3500], 'resent at T1, then 2*T1, 4*T1 later');
  t.ok(sent.every((s) => s.rseq === sent[0]!.rseq), 'a retransmission keeps its RSeq');
  t.equal(reliable.awaitingPrack, true);
  t.equal(reliable.prack(prack(`${sent[0]!.rseq} 7 INVITE`)), 200, 'the matching PRACK is answered 200');
  t.equal(reliable.awaitingPrack, false);
  clock.advance(64 * TIMERS.T1);
  t.equal(sent.length, 4, 'no retransmission after the PRACK');
  t.equal(timeouts(), 0);
  t.end();
});

t.test('RFC 3262 3: a PRACK that does not match the outstanding response (RSeq, CSeq or method) gets 481', (t) => {
  const { sent, reliable } = setup();
  reliable.send(testResponse(INVITE, 183, 'uas'));
  const rseq = sent[0]!.rseq;
  t.equal(reliable.prack(prack(`${rseq + 1} 7 INVITE`)), 481, 'another RSeq');
  t.equal(reliable.prack(prack(`${rseq} 6 INVITE`)), 481, 'another CSeq');
  t.equal(reliable.prack(prack(`${rseq} 7 BYE`)), 481, 'another method');
  t.equal(reliable.prack(prack('garbage')), 481, 'an RAck that does not parse');
  t.equal(reliable.prack(prack(`${rseq} 7 INVITE`)), 200, 'the right one still matches');
  t.equal(reliable.prack(prack(`${rseq} 7 INVITE`)), 481, 'and only once');
  t.end();
});

t.test('RFC 3262 3: a second reliable provisional waits for the first PRACK, then goes with RSeq + 1', (t) => {
  const { sent, reliable } = setup();
  reliable.send(testResponse(INVITE, 180, 'uas'));
  reliable.send(testResponse(INVITE, 183, 'uas'));
  t.same(sent.map((s) => s.status), [180], 'the 183 is held back');
  t.equal(reliable.prack(prack(`${sent[0]!.rseq} 7 INVITE`)), 200);
  t.same(sent.map((s) => s.status), [180, 183], 'sent once the 180 was acknowledged');
  t.equal(sent[1]!.rseq, sent[0]!.rseq + 1, 'RSeq counts up by one');
  t.end();
});

t.test('RFC 3262 3: no PRACK for 64*T1 gives up once; the final response stops everything', (t) => {
  const { clock, sent, reliable, timeouts } = setup();
  reliable.send(testResponse(INVITE, 180, 'uas'));
  clock.advance(64 * TIMERS.T1 - 1);
  t.equal(timeouts(), 0, 'not before 64*T1');
  clock.advance(1);
  t.equal(timeouts(), 1, 'onTimeout ran at 64*T1 after the first send');
  t.same(sent.map((s) => s.at), [0, 500, 1500, 3500, 7500, 15500, 31500], 'resent at intervals doubling without a cap until then');
  clock.advance(64 * TIMERS.T1);
  t.equal(sent.length, 7, 'and never after');
  t.equal(reliable.awaitingPrack, false);

  const other = setup();
  other.reliable.send(testResponse(INVITE, 180, 'uas'));
  other.reliable.send(testResponse(INVITE, 183, 'uas'));
  other.reliable.stop();
  other.clock.advance(64 * TIMERS.T1 + 1000);
  t.same(other.sent.map((s) => s.status), [180], 'after stop(): no retransmission, the waiting 183 never goes');
  t.equal(other.timeouts(), 0, 'and no time-out');
  t.end();
});
