/** @module Rate limiting of requests whose credentials fail (docs/API.md, Rate limits). */
import t from 'tap';
import { buildApp } from '../../../test/support/build-app.js';

t.test('docs/API.md rate limits: bad credentials spend from the client address allowance, so a key-guessing flood meets 429', async (t) => {
  const h = await buildApp(t, { options: { rateLimitPerSecond: 2, rateLimitBurst: 1 } });
  const tenant = await h.createTenant();
  const guess = (n: number) => h.request({ method: 'GET', url: '/v1/tenant', headers: { authorization: `Bearer vgw_live_guess${n}` } });
  const statuses = [];
  for (let n = 0; n < 5; n++) statuses.push((await guess(n)).statusCode);
  t.same(statuses, [401, 401, 401, 429, 429], 'rate + burst guesses are answered 401, the rest 429');
  const limited = await guess(9);
  t.equal(limited.headers['content-type'], 'application/problem+json');
  t.equal(JSON.parse(limited.body).code, 'rate_limited');
  t.match(limited.headers['retry-after'], /^[1-9]\d*$/, 'with Retry-After in seconds');
  const noCredentials = await h.request({ method: 'GET', url: '/v1/tenant' });
  t.equal(noCredentials.statusCode, 429, 'a request with no credentials spends from the same allowance');
  const valid = await h.request({ method: 'GET', url: '/v1/tenant', headers: tenant.auth });
  t.equal(valid.statusCode, 200, 'a valid key keeps its own allowance');
});
