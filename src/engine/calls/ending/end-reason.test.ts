import t from 'tap';
import { endReasonForFailure } from './end-reason.js';

t.test('RFC 3261 21.4-21.6: final responses classify the failed attempt', (t) => {
  const table: [number, string][] = [
    [486, 'busy'], [600, 'busy'], [408, 'no_answer'], [480, 'no_answer'], [603, 'declined'], [403, 'declined'],
    [404, 'not_found'], [484, 'not_found'], [604, 'not_found'], [487, 'canceled'], [503, 'unavailable'], [500, 'unavailable'],
    [488, 'failed'], [415, 'failed'],
  ];
  for (const [status, reason] of table) t.same(endReasonForFailure(status), { reason, sipStatus: status, hangupBy: 'callee' }, `${status} → ${reason}`);
  t.end();
});
