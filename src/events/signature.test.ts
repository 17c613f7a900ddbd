/** docs/EVENTS.md "Verifying a delivery": the signature header, secret rotation, staleness, constant-time match. */
import t from 'tap';
import { createHmac } from 'node:crypto';
import { newEndpointSecret, signDelivery, verifyDelivery } from './signature.js';

const body = JSON.stringify({ id: 'evt_1', type: 'call.answered', data: { call: { id: 'call_1' } } });

t.test('the header is t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">', (t) => {
  const header = signDelivery(['whsec_a'], 1_700_000_000, body);
  const expected = createHmac('sha256', 'whsec_a').update(`1700000000.${body}`).digest('hex');
  t.equal(header, `t=1700000000,v1=${expected}`);
  t.same(verifyDelivery(header, 'whsec_a', body, 1_700_000_010), { valid: true });
  t.end();
});

t.test('after a rotation both secrets sign, so a receiver on either one verifies', (t) => {
  const header = signDelivery(['whsec_new', 'whsec_old'], 1_700_000_000, body);
  t.equal(header.split(',').filter((p) => p.startsWith('v1=')).length, 2);
  t.same(verifyDelivery(header, 'whsec_new', body, 1_700_000_000), { valid: true });
  t.same(verifyDelivery(header, 'whsec_old', body, 1_700_000_000), { valid: true });
  t.same(verifyDelivery(header, 'whsec_other', body, 1_700_000_000), { valid: false, reason: 'mismatch' });
  t.end();
});

t.test('a changed body, a timestamp over 5 minutes old or a malformed header does not verify', (t) => {
  const header = signDelivery(['whsec_a'], 1_700_000_000, body);
  t.same(verifyDelivery(header, 'whsec_a', `${body} `, 1_700_000_000), { valid: false, reason: 'mismatch' });
  t.same(verifyDelivery(header, 'whsec_a', body, 1_700_000_301), { valid: false, reason: 'stale' });
  t.same(verifyDelivery(header, 'whsec_a', body, 1_700_000_300), { valid: true }, 'exactly 5 minutes is still accepted');
  for (const bad of ['', 't=1700000000', 'v1=00', `t=abc,${header.split(',')[1]!}`, 't=1700000000,v1=zz']) {
    t.same(verifyDelivery(bad, 'whsec_a', body, 1_700_000_000), { valid: false, reason: 'malformed' }, JSON.stringify(bad));
  }
  t.end();
});

t.test('endpoint secrets: whsec_ and 40 base62 characters, never twice the same', (t) => {
  const secrets = new Set(Array.from({ length: 200 }, newEndpointSecret));
  t.equal(secrets.size, 200);
  for (const s of secrets) t.match(s, /^whsec_[0-9A-Za-z]{40}$/);
  t.end();
});
