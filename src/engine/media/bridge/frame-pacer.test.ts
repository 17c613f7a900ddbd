import t from 'tap';
import { FakeClock, type Clock } from '../../../common/clock.js';
import { FramePacer } from './frame-pacer.js';

/** A clock whose timers always fire `lateMs` after they were due, like a loaded event loop. */
function lateClock(inner: FakeClock, lateMs: number): Clock {
  return { now: () => inner.now(), monotonic: () => inner.monotonic(), setTimeout: (fn, ms) => inner.setTimeout(fn, ms + lateMs) };
}

t.test('frames follow absolute deadlines: late timers do not accumulate drift', (t) => {
  const fake = new FakeClock();
  const times: number[] = [];
  const pacer = new FramePacer(lateClock(fake, 3), 20, () => times.push(fake.monotonic()));
  pacer.start();
  fake.advance(60_000);
  pacer.stop();
  // Chained 20 ms timers that each fire 3 ms late would give 60000 / 23 = 2608 frames.
  t.equal(times.length, 3000, 'one frame per 20 ms over a minute');
  t.ok(times.every((at, n) => at - n * 20 >= 0 && at - n * 20 <= 3), 'each frame within the timer lateness of its deadline');
  t.end();
});

t.test('after a stall the pacer catches up at most 5 frames, then re-bases', (t) => {
  const fake = new FakeClock();
  let frames = 0;
  let stalled = false;
  const clock: Clock = {
    now: () => fake.now(),
    monotonic: () => fake.monotonic(),
    setTimeout: (fn, ms) => fake.setTimeout(fn, stalled ? ms + 1000 : ms),
  };
  const pacer = new FramePacer(clock, 20, () => frames++);
  pacer.start();
  fake.advance(100);
  t.equal(frames, 6);
  stalled = true;
  fake.advance(20);
  stalled = false;
  fake.advance(1020);
  t.ok(frames <= 6 + 5 + 2, `no burst of 50 frames (${frames})`);
  const before = frames;
  fake.advance(200);
  t.equal(frames - before, 10, 'steady again');
  pacer.stop();
  t.equal(pacer.running, false);
  t.end();
});
