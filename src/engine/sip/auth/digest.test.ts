/** @module Digest computations against the published vectors, and the UAC/UAS round trip. */
import t from 'tap';
import { FakeClock } from '../../../common/clock.js';
import { digestResponse } from './digest.js';
import { parseAuthParams } from './auth-header.js';
import { DigestClient } from './digest-client.js';
import { DigestServer } from './digest-server.js';

t.test('RFC 2617 3.5: MD5 qop=auth example', (t) => {
  t.equal(digestResponse({ algorithm: 'MD5', username: 'Mufasa', realm: 'testrealm@host.com', password: 'Circle Of Life', method: 'GET', uri: '/dir/index.html', nonce: 'dcd98b7102dd2f0e8b11d0f600bfb0c093', qop: 'auth', nc: '00000001', cnonce: '0a4f113b' }), '6629fae49393a05397450978507c4ef1');
  t.end();
});

t.test('RFC 7616 3.9.1 (RFC 8760 2): SHA-256 and MD5 examples', (t) => {
  const base = { username: 'Mufasa', realm: 'http-auth@example.org', password: 'Circle of Life', method: 'GET', uri: '/dir/index.html', nonce: '7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v', qop: 'auth' as const, nc: '00000001', cnonce: 'f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ' };
  t.equal(digestResponse({ ...base, algorithm: 'SHA-256' }), '753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1');
  t.equal(digestResponse({ ...base, algorithm: 'MD5' }), '8ca523f5e9506fed4657c9700eebdbec');
  t.end();
});

t.test('RFC 2617 3.2.1: challenge parameters with quoted commas and escapes', (t) => {
  const p = parseAuthParams('Digest realm="a,b", nonce="x\\"y", qop="auth,auth-int", algorithm=SHA-256, stale=TRUE');
  t.equal(p?.scheme, 'Digest');
  t.equal(p?.params.get('realm'), 'a,b');
  t.equal(p?.params.get('nonce'), 'x"y');
  t.equal(p?.params.get('qop'), 'auth,auth-int');
  t.equal(p?.params.get('algorithm'), 'SHA-256');
  t.equal(parseAuthParams('Digest realm="unterminated'), undefined);
  t.end();
});

t.test('RFC 3261 22.2 / RFC 8760: UAC answers the server challenge, nonce count increases, prefers SHA-256', (t) => {
  const clock = new FakeClock();
  const server = new DigestServer({ realm: 'carrier.example', clock, secret: Buffer.alloc(32, 1) });
  const client = new DigestClient({ username: 'alice', password: 'secret' });
  t.ok(client.handleChallenge(401, server.challenge()));
  const a1 = client.authorize('INVITE', 'sip:bob@carrier.example');
  t.equal(a1?.name, 'Authorization');
  t.match(a1?.value, /algorithm=SHA-256/);
  t.match(a1?.value, /nc=00000001/);
  t.same(server.verify(a1?.value, 'INVITE', (u) => (u === 'alice' ? 'secret' : undefined)), { ok: true, username: 'alice' });
  const a2 = client.authorize('BYE', 'sip:bob@carrier.example');
  t.match(a2?.value, /nc=00000002/);
  t.same(server.verify(a2?.value, 'BYE', () => 'secret'), { ok: true, username: 'alice' });
  t.same(server.verify(a2?.value, 'BYE', () => 'wrong'), { ok: false, reason: 'bad-response' });
  t.same(server.verify(a2?.value, 'BYE', () => undefined), { ok: false, reason: 'unknown-user' });
  t.same(server.verify(undefined, 'BYE', () => 'x'), { ok: false, reason: 'missing' });
  t.end();
});

t.test('RFC 3261 22.2: a second challenge for the same realm after credentials is a rejection unless stale', (t) => {
  const clock = new FakeClock();
  const server = new DigestServer({ realm: 'r', clock, algorithms: ['MD5'] });
  const client = new DigestClient({ username: 'u', password: 'p' });
  t.ok(client.handleChallenge(407, server.challenge()));
  t.equal(client.authorize('REGISTER', 'sip:r')?.name, 'Proxy-Authorization');
  t.notOk(client.handleChallenge(407, server.challenge()), 'same realm, not stale: give up');
  t.ok(client.handleChallenge(407, server.challenge(true)), 'stale=true: retry with the new nonce');
  t.end();
});

t.test('RFC 2617 3.2.1: an expired nonce verifies as stale, a forged one as bad-nonce', (t) => {
  const clock = new FakeClock();
  const server = new DigestServer({ realm: 'r', clock, nonceTtlMs: 1000 });
  const client = new DigestClient({ username: 'u', password: 'p' });
  client.handleChallenge(401, server.challenge());
  const h = client.authorize('INVITE', 'sip:x@r')?.value;
  clock.advance(2000);
  t.same(server.verify(h, 'INVITE', () => 'p'), { ok: false, reason: 'stale' });
  const forged = h?.replace(/nonce="([0-9a-f]+)\./, 'nonce="1.');
  t.same(server.verify(forged, 'INVITE', () => 'p'), { ok: false, reason: 'bad-nonce' });
  t.end();
});

t.test('RFC 3261 22.4: a client bound to a realm refuses other realms and qop=auth-int only', (t) => {
  const client = new DigestClient({ username: 'u', password: 'p', realm: 'mine' });
  t.notOk(client.handleChallenge(401, ['Digest realm="other", nonce="n"']));
  t.notOk(client.handleChallenge(401, ['Digest realm="mine", nonce="n", qop="auth-int"']));
  t.ok(client.handleChallenge(401, ['Digest realm="mine", nonce="n"']));
  t.notMatch(client.authorize('INVITE', 'sip:a@b')?.value, /qop/, 'RFC 2069 mode without qop');
  t.end();
});
