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
  const SRC = '192.0.2.7';
  const req = (method: string): { method: string; requestUri: string; source: string } => ({ method, requestUri: 'sip:bob@carrier.example', source: SRC });
  t.ok(client.handleChallenge(401, server.challenge(SRC)));
  const a1 = client.authorize('INVITE', 'sip:bob@carrier.example');
  t.equal(a1?.name, 'Authorization');
  t.match(a1?.value, /algorithm=SHA-256/);
  t.match(a1?.value, /nc=00000001/);
  t.same(server.verify(a1?.value, req('INVITE'), (u) => (u === 'alice' ? 'secret' : undefined)), { ok: true, username: 'alice' });
  const a2 = client.authorize('BYE', 'sip:bob@carrier.example');
  t.match(a2?.value, /nc=00000002/);
  t.same(server.verify(a2?.value, req('BYE'), () => 'wrong'), { ok: false, reason: 'bad-response' });
  t.same(server.verify(a2?.value, req('BYE'), () => undefined), { ok: false, reason: 'unknown-user' });
  t.same(server.verify(a2?.value, req('BYE'), () => 'secret'), { ok: true, username: 'alice' });
  t.same(server.verify(undefined, req('BYE'), () => 'x'), { ok: false, reason: 'missing' });
  t.end();
});

t.test('RFC 3261 22.2: a second challenge for the same realm after credentials is a rejection unless stale', (t) => {
  const clock = new FakeClock();
  const server = new DigestServer({ realm: 'r', clock, algorithms: ['MD5'] });
  const client = new DigestClient({ username: 'u', password: 'p' });
  t.ok(client.handleChallenge(407, server.challenge('192.0.2.7')));
  t.equal(client.authorize('REGISTER', 'sip:r')?.name, 'Proxy-Authorization');
  t.notOk(client.handleChallenge(407, server.challenge('192.0.2.7')), 'same realm, not stale: give up');
  t.ok(client.handleChallenge(407, server.challenge('192.0.2.7', true)), 'stale=true: retry with the new nonce');
  t.end();
});

t.test('RFC 2617 3.2.1: an expired nonce verifies as stale, a forged one as bad-nonce', (t) => {
  const clock = new FakeClock();
  const server = new DigestServer({ realm: 'r', clock, nonceTtlMs: 1000 });
  const client = new DigestClient({ username: 'u', password: 'p' });
  client.handleChallenge(401, server.challenge('192.0.2.7'));
  const h = client.authorize('INVITE', 'sip:x@r')?.value;
  const req = { method: 'INVITE', requestUri: 'sip:x@r', source: '192.0.2.7' };
  clock.advance(2000);
  t.same(server.verify(h, req, () => 'p'), { ok: false, reason: 'stale' });
  const forged = h?.replace(/nonce="([0-9a-f]+)\./, 'nonce="1.');
  t.same(server.verify(forged, req, () => 'p'), { ok: false, reason: 'bad-nonce' });
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

t.test('RFC 7616 3.4 / RFC 2617 3.2.2: without qop a nonce is single-use; with qop each nc is used once, in rising order', (t) => {
  const clock = new FakeClock();
  const server = new DigestServer({ realm: 'r', clock, algorithms: ['MD5'] });
  const req = { method: 'INVITE', requestUri: 'sip:x@r', source: '192.0.2.7' };
  const nonce = /nonce="([^"]+)"/.exec(server.challenge(req.source)[0] ?? '')?.[1] ?? '';
  const header = (qop: boolean, nc: string): string => {
    const response = digestResponse({ algorithm: 'MD5', username: 'u', realm: 'r', password: 'p', method: 'INVITE', uri: 'sip:x@r', nonce, ...(qop ? { qop: 'auth' as const, nc, cnonce: `c${nc}` } : {}) });
    return `Digest username="u", realm="r", nonce="${nonce}", uri="sip:x@r", response="${response}", algorithm=MD5${qop ? `, qop=auth, nc=${nc}, cnonce="c${nc}"` : ''}`;
  };
  t.same(server.verify(header(true, '00000002'), req, () => 'p'), { ok: true, username: 'u' });
  t.same(server.verify(header(true, '00000001'), req, () => 'p'), { ok: false, reason: 'replayed' }, 'a lower count after a higher one');
  t.same(server.verify(header(true, '00000002'), req, () => 'p'), { ok: false, reason: 'replayed' }, 'the same count again');
  t.same(server.verify(header(true, '00000003'), req, () => 'p'), { ok: true, username: 'u' });
  t.same(server.verify(header(true, '3'), req, () => 'p'), { ok: false, reason: 'malformed' }, 'nc is 8 hex digits');

  const plain = /nonce="([^"]+)"/.exec(server.challenge(req.source)[0] ?? '')?.[1] ?? '';
  const noQop = (): string => {
    const response = digestResponse({ algorithm: 'MD5', username: 'u', realm: 'r', password: 'p', method: 'INVITE', uri: 'sip:x@r', nonce: plain });
    return `Digest username="u", realm="r", nonce="${plain}", uri="sip:x@r", response="${response}"`;
  };
  t.same(server.verify(noQop(), req, () => 'p'), { ok: true, username: 'u' });
  t.same(server.verify(noQop(), req, () => 'p'), { ok: false, reason: 'replayed' }, 'RFC 2069 mode: a second use');
  t.end();
});

t.test('RFC 7616 3.4.6: the digest uri must name the Request-URI (RFC 3261 19.1.4 equality)', (t) => {
  const server = new DigestServer({ realm: 'r', clock: new FakeClock() });
  const client = new DigestClient({ username: 'u', password: 'p' });
  client.handleChallenge(401, server.challenge('192.0.2.7'));
  const h = client.authorize('INVITE', 'sip:bob@Example.COM;transport=udp')?.value;
  t.same(server.verify(h, { method: 'INVITE', requestUri: 'sip:carol@example.com;transport=udp', source: '192.0.2.7' }, () => 'p'), { ok: false, reason: 'uri-mismatch' });
  t.same(server.verify(h, { method: 'INVITE', requestUri: 'sip:bob@example.com;transport=UDP', source: '192.0.2.7' }, () => 'p'), { ok: true, username: 'u' }, 'host case and parameter case do not matter');
  t.end();
});

t.test('RFC 7616 5.12: a nonce is bound to the source it was issued to', (t) => {
  const server = new DigestServer({ realm: 'r', clock: new FakeClock() });
  const client = new DigestClient({ username: 'u', password: 'p' });
  client.handleChallenge(401, server.challenge('192.0.2.7'));
  const h = client.authorize('INVITE', 'sip:x@r')?.value;
  t.same(server.verify(h, { method: 'INVITE', requestUri: 'sip:x@r', source: '192.0.2.8' }, () => 'p'), { ok: false, reason: 'bad-nonce' });
  t.same(server.verify(h, { method: 'INVITE', requestUri: 'sip:x@r', source: '192.0.2.7' }, () => 'p'), { ok: true, username: 'u' });
  t.end();
});

t.test('nonce store bounds: at most maxNonces remembered, the least recently used forgotten first (then stale)', (t) => {
  const clock = new FakeClock();
  const server = new DigestServer({ realm: 'r', clock, maxNonces: 100 });
  const first = new DigestClient({ username: 'u', password: 'p' });
  first.handleChallenge(401, server.challenge('192.0.2.7'));
  const kept = new DigestClient({ username: 'u', password: 'p' });
  kept.handleChallenge(401, server.challenge('192.0.2.7'));
  const req = { method: 'INVITE', requestUri: 'sip:x@r', source: '192.0.2.7' };
  t.same(server.verify(kept.authorize('INVITE', 'sip:x@r')?.value, req, () => 'p'), { ok: true, username: 'u' }, 'a use makes it the most recent');
  for (let i = 0; i < 5000; i++) server.challenge(`192.0.2.${i % 250}`);
  t.equal(server.nonceCount, 100, 'bounded');
  t.same(server.verify(first.authorize('INVITE', 'sip:x@r')?.value, req, () => 'p'), { ok: false, reason: 'stale' }, 'an evicted nonce with the right credentials is stale');
  clock.advance(301_000);
  server.challenge('192.0.2.1');
  t.equal(server.nonceCount, 1, 'expired nonces pruned');
  t.end();
});
