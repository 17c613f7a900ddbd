/**
 * docs/API.md "Requests and responses": ids are a prefix, a time part and base62 randomness from
 * the CSPRNG, unique, and without the bias a modulo of whole bytes would give the alphabet's first
 * characters.
 */
import t from 'tap';
import { newEventId, randomBase62 } from './ids.js';

t.test('ids are prefixed, base62 after the prefix, and unique', (t) => {
  const ids = Array.from({ length: 20_000 }, () => newEventId());
  t.equal(new Set(ids).size, ids.length);
  t.ok(ids.every((id) => /^evt_[0-9a-z]{9}[0-9A-Za-z]{14}$/.test(id)), 'shape');
  t.end();
});

t.test('every base62 character is drawn about as often as the others', (t) => {
  const counts = new Map<string, number>();
  const text = randomBase62(62 * 4_000);
  for (const c of text) counts.set(c, (counts.get(c) ?? 0) + 1);
  t.equal(counts.size, 62);
  // Expected 4,000 each; a byte % 62 without rejection would give the first 8 characters 5/4 of it.
  for (const [c, n] of counts) t.ok(n > 3_600 && n < 4_400, `${c}: ${n}`);
  t.end();
});
