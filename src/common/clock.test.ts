import t from 'tap';
import { FakeClock } from './clock.js';

t.test('FakeClock fires timers in due order and moves both clocks', (t) => {
  const clock = new FakeClock(1000);
  const fired: string[] = [];
  clock.setTimeout(() => fired.push('b'), 20);
  clock.setTimeout(() => fired.push('a'), 10);
  const c = clock.setTimeout(() => fired.push('c'), 15);
  c.cancel();
  clock.advance(15);
  t.same(fired, ['a']);
  clock.advance(5);
  t.same(fired, ['a', 'b']);
  t.equal(clock.monotonic(), 20);
  t.equal(clock.now(), 1020);
  t.end();
});
