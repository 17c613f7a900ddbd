/** @module Digits toward the remote party by SIP INFO (docs/API.md "Digits toward the callee", carriers with `dtmf: info`). */
import t from 'tap';
import { FakeClock } from '../../../common/clock.js';
import { silentLogger } from '../../../common/logger.js';
import { DigitsByInfo } from './digits-by-info.js';

const turns = async (n = 5) => { for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve)); };

t.test('RFC 6086 / application/dtmf-relay: one INFO per key, in order, each after the previous answer; w waits 500 ms; then the acknowledgement', async (t) => {
  const clock = new FakeClock();
  const sent: { body: string; at: number }[] = [];
  let answer: ((status: number) => void) | null = null;
  const dialog = {
    info: (body: Buffer, contentType: string) => {
      t.equal(contentType, 'application/dtmf-relay');
      sent.push({ body: body.toString(), at: clock.monotonic() });
      return new Promise<number>((resolve) => { answer = resolve; });
    },
  };
  const digits = new DigitsByInfo(clock, dialog, silentLogger());
  let acked = false;
  digits.send('1w#', () => { acked = true; });
  await turns();
  t.same(sent.map((s) => s.body), ['Signal=1\r\nDuration=100\r\n'], 'the first key, and nothing more before its answer');
  answer!(200);
  await turns();
  t.equal(sent.length, 1, 'the pause holds the next key back');
  clock.advance(499);
  await turns();
  t.equal(sent.length, 1);
  clock.advance(1);
  await turns();
  t.same(sent.map((s) => s.body), ['Signal=1\r\nDuration=100\r\n', 'Signal=#\r\nDuration=100\r\n'], '# after 500 ms');
  t.notOk(acked, 'not acknowledged before its last INFO is answered');
  answer!(200);
  await turns();
  t.ok(acked);
  digits.send('2', () => t.fail('stopped: nothing more is sent or acknowledged'));
  digits.stop();
  await turns();
  t.equal(sent.length, 2);
});
