/** docs/EVENTS.md "Retries": exponential back-off from 5 s to 1 h with jitter, for 24 hours after the event. */
import t from 'tap';
import { FIRST_RETRY_MS, MAX_RETRY_INTERVAL_MS, nextAttemptAt, RETRY_WINDOW_MS } from './retry-schedule.js';

t.test('the wait doubles from 5 s up to 1 h, jittered over the upper half of each interval', (t) => {
  const waits = (random: number): number[] => Array.from({ length: 14 }, (_, i) => nextAttemptAt(i + 1, 0, 0, () => random)!);
  const low = waits(0);
  const high = waits(0.999999);
  t.equal(low[0], FIRST_RETRY_MS / 2);
  t.equal(low[1], FIRST_RETRY_MS);
  t.equal(Math.round(high[0]!), FIRST_RETRY_MS);
  for (let i = 1; i < low.length; i++) t.ok(low[i]! >= low[i - 1]!, 'never shorter than the wait before');
  t.equal(low.at(-1), MAX_RETRY_INTERVAL_MS / 2, 'capped: at least 30 min');
  t.ok(high.at(-1)! <= MAX_RETRY_INTERVAL_MS && high.at(-1)! > MAX_RETRY_INTERVAL_MS - 10, 'capped: at most 1 h');
  t.end();
});

t.test('no attempt is scheduled past 24 hours after the event', (t) => {
  const created = 1_000_000;
  t.equal(nextAttemptAt(30, created + RETRY_WINDOW_MS - 60_000, created, () => 0.5), null);
  t.ok(nextAttemptAt(30, created + RETRY_WINDOW_MS - 3 * MAX_RETRY_INTERVAL_MS, created, () => 0.5) !== null);
  // Attempts follow one another until the window ends: about 35 in 24 hours.
  let at = created;
  let attempts = 1;
  for (let next = nextAttemptAt(1, at, created); next !== null; next = nextAttemptAt(++attempts, at, created)) at = next;
  t.ok(attempts > 20 && attempts < 60, `${attempts} attempts in the window`);
  t.ok(at - created <= RETRY_WINDOW_MS);
  t.end();
});
