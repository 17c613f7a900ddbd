import t from 'tap';
import { buildApp, sessionCookieOf } from '../../test/support/build-app.js';

const PROBLEM = 'application/problem+json';

t.test('docs/API.md "Authentication": the BearerAuth matrix', async (t) => {
  const h = await buildApp(t);
  const acme = await h.createTenant('Acme');
  const cases: [string, Record<string, string>, number][] = [
    ['no credentials', {}, 401],
    ['a malformed header (Basic)', { authorization: 'Basic dXNlcjpwYXNz' }, 401],
    ['Bearer with no token', { authorization: 'Bearer' }, 401],
    ['an unknown key of the right shape', { authorization: `Bearer vgw_live_${'A'.repeat(40)}` }, 401],
    ['garbage', { authorization: 'Bearer \u0000\u0001' }, 401],
    ['the live key', { authorization: `Bearer ${acme.apiKey}` }, 200],
    ['the sandbox key', { authorization: `Bearer ${acme.sandboxKey}` }, 200],
    ['a lower-case scheme', { authorization: `bearer ${acme.apiKey}` }, 200],
  ];
  for (const [name, headers, status] of cases) {
    const res = await h.request({ method: 'GET', url: '/v1/tenant', headers });
    t.equal(res.statusCode, status, name);
    if (status === 401) {
      t.equal(res.headers['content-type'], PROBLEM, `${name}: problem+json`);
      t.equal(res.headers['www-authenticate'], 'Bearer realm="voice-gateway"', `${name}: WWW-Authenticate`);
      t.equal(JSON.parse(res.body).code, 'unauthorized');
    }
  }
  const sandbox = await h.request({ method: 'GET', url: '/v1/tenant', headers: { authorization: `Bearer ${acme.sandboxKey}` } });
  t.equal(JSON.parse(sandbox.body).key_kind, 'sandbox', 'the sandbox key is known as one');
  await h.store.apiKeys.revoke(acme.apiKey);
  const revoked = await h.request({ method: 'GET', url: '/v1/tenant', headers: acme.auth });
  t.equal(revoked.statusCode, 401, 'a revoked key');
});

t.test('docs/API.md "Authentication": cookie login, use, logout and expiry', async (t) => {
  const h = await buildApp(t);
  const acme = await h.createTenant('Acme');
  const bad = await h.request({ method: 'POST', url: '/v1/auth/login', payload: { api_key: 'vgw_live_nope' } });
  t.equal(bad.statusCode, 401);
  const login = await h.request({ method: 'POST', url: '/v1/auth/login', payload: { api_key: acme.apiKey } });
  t.equal(login.statusCode, 204);
  const setCookie = String(login.headers['set-cookie']);
  t.match(setCookie, /^gateway_session=[\w-]{40,}; HttpOnly; SameSite=Strict; Path=\/; Max-Age=28800; Secure$/);
  const cookie = `gateway_session=${sessionCookieOf(login)}`;
  const me = await h.request({ method: 'GET', url: '/v1/tenant', headers: { cookie } });
  t.equal(me.statusCode, 200);
  t.same(JSON.parse(me.body).auth, 'cookie');

  const logout = await h.request({ method: 'POST', url: '/v1/auth/logout', headers: { cookie } });
  t.equal(logout.statusCode, 204);
  t.match(String(logout.headers['set-cookie']), /gateway_session=; .*Max-Age=0/);
  t.equal((await h.request({ method: 'GET', url: '/v1/tenant', headers: { cookie } })).statusCode, 401, 'the session is gone after logout');

  const again = await h.request({ method: 'POST', url: '/v1/auth/login', payload: { api_key: acme.apiKey } });
  const cookie2 = `gateway_session=${sessionCookieOf(again)}`;
  h.clock.advance(31 * 60_000); // idle limit is 30 minutes in the harness
  const expired = await h.request({ method: 'GET', url: '/v1/tenant', headers: { cookie: cookie2 } });
  t.equal(expired.statusCode, 401, 'an idle session expires (fake clock)');
  t.equal(JSON.parse(expired.body).code, 'unauthorized');
});

t.test('docs/API.md "Authentication": an Authorization header alone decides, even beside a valid cookie', async (t) => {
  const h = await buildApp(t);
  const acme = await h.createTenant('Acme');
  const login = await h.request({ method: 'POST', url: '/v1/auth/login', payload: { api_key: acme.apiKey } });
  const cookie = `gateway_session=${sessionCookieOf(login)}`;
  const res = await h.request({ method: 'GET', url: '/v1/tenant', headers: { cookie, authorization: 'Bearer wrong' } });
  t.equal(res.statusCode, 401);
  const other = await h.createTenant('Other');
  const asOther = await h.request({ method: 'GET', url: '/v1/tenant', headers: { cookie, ...other.auth } });
  t.equal(JSON.parse(asOther.body).id, other.tenant.id, 'the bearer key wins over the cookie');
});

t.test('docs/API.md "Authentication": CSRF refusal on cookie requests with unsafe methods', async (t) => {
  const h = await buildApp(t);
  const acme = await h.createTenant('Acme');
  const login = await h.request({ method: 'POST', url: '/v1/auth/login', payload: { api_key: acme.apiKey } });
  const cookie = `gateway_session=${sessionCookieOf(login)}`;
  const crossSite = await h.request({ method: 'POST', url: '/v1/auth/logout', headers: { cookie, 'sec-fetch-site': 'cross-site' } });
  t.equal(crossSite.statusCode, 403);
  t.equal(JSON.parse(crossSite.body).code, 'csrf_rejected');
  const foreign = await h.request({ method: 'POST', url: '/v1/auth/logout', headers: { cookie, origin: 'https://evil.example' } });
  t.equal(foreign.statusCode, 403, 'a foreign Origin');
  const read = await h.request({ method: 'GET', url: '/v1/tenant', headers: { cookie, 'sec-fetch-site': 'cross-site' } });
  t.equal(read.statusCode, 200, 'safe methods are not refused');
  const bearer = await h.request({ method: 'POST', url: '/v1/auth/logout', headers: { ...acme.auth, origin: 'https://evil.example' } });
  t.equal(bearer.statusCode, 204, 'bearer requests carry no ambient authority, so no CSRF check');
  const allowed = await h.request({ method: 'POST', url: '/v1/auth/logout', headers: { cookie, origin: 'https://console.example.com', 'sec-fetch-site': 'same-site' } });
  t.equal(allowed.statusCode, 204, 'an allowed origin passes');
  const crossLogin = await h.request({ method: 'POST', url: '/v1/auth/login', headers: { 'sec-fetch-site': 'cross-site' }, payload: { api_key: acme.apiKey } });
  t.equal(crossLogin.statusCode, 403, 'login CSRF is refused too');
  const foreignLogin = await h.request({ method: 'POST', url: '/v1/auth/login', headers: { origin: 'https://evil.example' }, payload: { api_key: acme.apiKey } });
  t.equal(foreignLogin.statusCode, 403, 'a login naming a foreign Origin is refused like any cookie request from one');
  t.equal(foreignLogin.json().code, 'csrf_rejected');
});

t.test('docs/API.md "Errors": a key never appears in a log line', async (t) => {
  const h = await buildApp(t);
  const acme = await h.createTenant('Acme');
  await h.request({ method: 'POST', url: '/v1/auth/login', payload: { api_key: acme.apiKey } });
  await h.request({ method: 'GET', url: '/v1/tenant', headers: acme.auth });
  await h.request({ method: 'GET', url: '/v1/tenant', headers: { authorization: `Bearer ${acme.sandboxKey}x` } });
  t.ok(h.logLines.length >= 3, 'requests were logged');
  const all = h.logLines.join('\n');
  t.notOk(all.includes(acme.apiKey) || all.includes(acme.sandboxKey), 'no key in the logs');
});
