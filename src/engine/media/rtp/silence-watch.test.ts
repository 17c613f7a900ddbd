/**
 * The media timeout's watch (docs/DECISIONS.md "Calls"): once per silence, at
 * the timeout after the last packet heard, however that packet's time was measured.
 */
import t from 'tap';
import { FakeClock } from '../../../common/clock.js';
import { SilenceWatch } from './silence-watch.js';

t.test('fires once, timeoutMs after the last packet heard, and again only after a new packet', (t) => {
  const clock = new FakeClock();
  let fired = 0;
  const watch = new SilenceWatch(clock, 5000, () => fired++);
  watch.start();
  clock.advance(3000);
  watch.heard(clock.monotonic());
  clock.advance(4999);
  t.equal(fired, 0, 'not yet: 4,999 ms of silence');
  clock.advance(1);
  t.equal(fired, 1, 'at 5,000 ms of silence');
  clock.advance(20_000);
  t.equal(fired, 1, 'once per silence');
  watch.heard(clock.monotonic());
  clock.advance(5000);
  t.equal(fired, 2, 'a new packet starts watching again');
  watch.stop();
  t.end();
});

t.test('a packet heard at a fractional time in the past still ends in one timeout, not a spinning timer', (t) => {
  // Heard 0.07 µs before the clock's 4,000 ms, as a relayed packet's record (counted in arrears)
  // can be. The first check, at 5,000 ms, re-arms for the rest of the timeout; in floating point
  // that lands 1e-12 ms short of it, a remainder too small to move the clock at all.
  const clock = new FakeClock();
  let fired = 0;
  const watch = new SilenceWatch(clock, 5000, () => fired++);
  watch.start();
  clock.advance(4000);
  const heardAt = 3999.9999258;
  t.ok(5000 + (5000 - (5000 - heardAt)) - heardAt < 5000, 'the rounding this test is about happens on this value');
  watch.heard(heardAt);
  clock.advance(6000); // would never return if the watch re-armed at the same instant
  t.equal(fired, 1, 'the timeout fired once');
  watch.stop();
  t.end();
});
