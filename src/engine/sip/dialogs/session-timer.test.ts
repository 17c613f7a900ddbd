/** @module RFC 4028 negotiation and RFC 3261 14.1 back-off, as pure functions. */
import t from 'tap';
import { decideUasSessionTimer, expireAfterMs, parseSessionExpires, refreshAfterMs, retryAfter422, formatSessionExpires } from './session-timer.js';
import { glareBackoffMs } from './glare.js';

t.test('RFC 4028 9: Session-Expires below Min-SE gets 422 with our Min-SE', (t) => {
  t.same(decideUasSessionTimer('60', undefined, true, 90), { kind: 'reject-422', minSe: 90 });
  t.end();
});

t.test('RFC 4028 9: the UAS keeps the refresher the UAC named, or picks one', (t) => {
  t.same(decideUasSessionTimer('1800;refresher=uas', undefined, true, 90), { kind: 'accept', sessionExpires: { deltaSeconds: 1800, refresher: 'uas' } });
  t.same(decideUasSessionTimer('1800', undefined, true, 90), { kind: 'accept', sessionExpires: { deltaSeconds: 1800, refresher: 'uac' } });
  t.same(decideUasSessionTimer('1800', undefined, false, 90), { kind: 'accept', sessionExpires: { deltaSeconds: 1800, refresher: 'uas' } });
  t.same(decideUasSessionTimer(undefined, undefined, false, 90), { kind: 'accept', sessionExpires: undefined });
  t.end();
});

t.test('RFC 4028 10: refresh at half, expire at SE - min(32, SE/3); 7.4 retry after 422', (t) => {
  t.equal(refreshAfterMs(1800), 900_000);
  t.equal(expireAfterMs(1800), 1_768_000);
  t.equal(expireAfterMs(90), 60_000);
  t.equal(retryAfter422(90, '300'), 300);
  t.equal(retryAfter422(300, '300'), undefined);
  t.same(parseSessionExpires('1800 ; refresher=UAC'), { deltaSeconds: 1800, refresher: 'uac' });
  t.equal(parseSessionExpires('abc'), undefined);
  t.equal(formatSessionExpires({ deltaSeconds: 90, refresher: 'uas' }), '90;refresher=uas');
  t.end();
});

t.test('RFC 3261 14.1: 491 back-off ranges by Call-ID ownership, in 10 ms units', (t) => {
  t.equal(glareBackoffMs(true, () => 0), 2100);
  t.equal(glareBackoffMs(true, () => 0.9999), 4000);
  t.equal(glareBackoffMs(false, () => 0), 0);
  t.equal(glareBackoffMs(false, () => 0.9999), 2000);
  t.end();
});
