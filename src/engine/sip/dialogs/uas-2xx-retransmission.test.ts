/** @module The UAS 2xx retransmission schedule and its 64*T1 give-up (RFC 3261 §13.3.1.4), on a fake clock. */
import t from 'tap';
import { FakeClock } from '../../../common/clock.js';
import { testRequest, testResponse } from '../../../../test/support/sip-messages.js';
import type { SipResponse } from '../messages/sip-message.js';
import { retransmit2xxUntilAck } from './uas-2xx-retransmission.js';

const TIMERS = { T1: 500, T2: 4000 };

/** Records the time of every resend. */
function recorder(clock: FakeClock): { at: number[]; respond(r: SipResponse): void } {
  const at: number[] = [];
  return { at, respond: () => at.push(clock.monotonic()) };
}

t.test('RFC 3261 13.3.1.4: the 2xx is resent at T1, doubling to T2; no ACK by 64*T1 times out', (t) => {
  const clock = new FakeClock();
  const tx = recorder(clock);
  let timedOutAt: number | undefined;
  const pending = retransmit2xxUntilAck(clock, TIMERS, testResponse(testRequest({ cseq: 7 }), 200, 'uas'), tx, () => { timedOutAt = clock.monotonic(); });
  t.equal(pending.cseq, 7, 'the ACK to wait for carries the INVITE CSeq number');
  clock.advance(64 * TIMERS.T1 + 10_000);
  t.same(tx.at, [500, 1500, 3500, 7500, 11500, 15500, 19500, 23500, 27500, 31500], 'T1, 2T1, 4T1, then every T2 for 64*T1');
  t.equal(timedOutAt, 35500, 'the give-up falls on the first interval end past 64*T1 (32 s)');
  t.end();
});

t.test('RFC 3261 13.3.1.4: the ACK (cancel) stops the retransmissions and the timeout', (t) => {
  const clock = new FakeClock();
  const tx = recorder(clock);
  let timedOut = false;
  const pending = retransmit2xxUntilAck(clock, TIMERS, testResponse(testRequest(), 200, 'uas'), tx, () => { timedOut = true; });
  clock.advance(1600);
  pending.cancel();
  clock.advance(64 * TIMERS.T1);
  t.same(tx.at, [500, 1500]);
  t.equal(timedOut, false);
  t.end();
});
