/**
 * docs/API.md "Call history": `GET /v1/calls?state=ended` with `number`, `ended_after`,
 * `ended_before`, `end_reason` and `carrier` selects ended calls in the database, paged with the
 * cursor, within the key's scope; a history filter without `state=ended` or an empty range is 400.
 */
import t from 'tap';
import { buildApp } from '../support/build-app.js';
import { callRecord } from '../support/call-records.js';

const at = (minutesAgo: number, now: number): string => new Date(now - minutesAgo * 60_000).toISOString();

t.test('docs/API.md "Call history": each filter selects ended calls beyond the live window, paged', async (t) => {
  const h = await buildApp(t);
  const tenant = await h.createTenant();
  const other = await h.createTenant('Other');
  const now = h.clock.now();
  const ended = async (minutesAgo: number, o: Parameters<typeof callRecord>[2] = {}) => {
    const c = callRecord(tenant.tenant.id, at(minutesAgo + 1, now), { state: 'ended', ended_at: at(minutesAgo, now), end_reason: 'completed', ...o });
    await h.store.calls.insert(c);
    return c.id;
  };
  const old = await ended(3 * 24 * 60, { to_number: '+15550123', end_reason: 'busy' });
  const yesterday = await ended(24 * 60, { carrier: 'twilio' });
  const recent = await ended(5, { from_number: '+15550123', end_reason: 'busy' });
  await h.store.calls.insert(callRecord(other.tenant.id, at(6, now), { state: 'ended', ended_at: at(5, now), end_reason: 'busy', to_number: '+15550123' }));
  await h.store.calls.insert(callRecord(tenant.tenant.id, at(2, now), { state: 'active', to_number: '+15550123' }));

  const list = async (query: string) => {
    const res = await h.request({ method: 'GET', url: `/v1/calls?state=ended&${query}`, headers: tenant.auth });
    t.equal(res.statusCode, 200, query);
    return res.json<{ data: { id: string }[]; has_more: boolean; next_cursor: string | null }>();
  };
  const since = encodeURIComponent(at(7 * 24 * 60, now));
  t.same((await list('')).data.map((c) => c.id), [recent], 'without filters: the live window only');
  t.same((await list(`ended_after=${since}`)).data.map((c) => c.id), [recent, yesterday, old], 'ended_after reaches back past the window');
  t.same((await list(`ended_after=${since}&number=%2B15550123`)).data.map((c) => c.id), [recent, old], 'number: from or to, of this tenant only');
  t.same((await list(`ended_after=${since}&end_reason=busy`)).data.map((c) => c.id), [recent, old], 'end_reason');
  t.same((await list(`ended_after=${since}&carrier=twilio`)).data.map((c) => c.id), [yesterday], 'carrier');
  const before = encodeURIComponent(at(60, now).replace('Z', '+00:00'));
  t.same((await list(`ended_after=${since}&ended_before=${before}`)).data.map((c) => c.id), [yesterday, old], 'ended_before, an offset time normalised');

  const first = await list(`ended_after=${since}&limit=2`);
  t.same(first.data.map((c) => c.id), [recent, yesterday]);
  t.ok(first.has_more);
  const rest = await list(`ended_after=${since}&limit=2&cursor=${first.next_cursor}`);
  t.same(rest.data.map((c) => c.id), [old], 'the cursor continues with the same filters');
});

t.test('docs/API.md "Call history": a sandbox key sees only sandbox calls whatever carrier it names', async (t) => {
  const h = await buildApp(t);
  const tenant = await h.createTenant();
  const now = h.clock.now();
  await h.store.calls.insert(callRecord(tenant.tenant.id, at(11, now), { state: 'ended', ended_at: at(10, now), end_reason: 'completed', carrier: 'telnyx' }));
  const res = await h.request({ method: 'GET', url: '/v1/calls?state=ended&carrier=telnyx', headers: { authorization: `Bearer ${tenant.sandboxKey}` } });
  t.equal(res.statusCode, 200);
  t.same(res.json().data, []);
});

t.test('docs/API.md "Call history": bad history queries are 400 validation_failed with the parameter named', async (t) => {
  const h = await buildApp(t);
  const tenant = await h.createTenant();
  const cases: [string, string][] = [
    ['/v1/calls?number=%2B15550123', '/query/number'],
    ['/v1/calls?state=active&end_reason=busy', '/query/end_reason'],
    ['/v1/calls?state=ended&end_reason=exploded', '/query/end_reason'],
    ['/v1/calls?state=ended&number=5550123', '/query/number'],
    ['/v1/calls?state=ended&ended_after=yesterday', '/query/ended_after'],
    ['/v1/calls?state=ended&ended_after=2026-01-02T00:00:00Z&ended_before=2026-01-01T00:00:00Z', '/query/ended_before'],
  ];
  for (const [url, path] of cases) {
    const res = await h.request({ method: 'GET', url, headers: tenant.auth });
    t.equal(res.statusCode, 400, url);
    const body = res.json<{ code: string; errors: { path: string }[] }>();
    t.equal(body.code, 'validation_failed', url);
    t.ok(body.errors.some((e) => e.path === path), `${url} names ${path}`);
  }
});
