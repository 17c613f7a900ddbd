/**
 * docs/API.md "Call events" and docs/EVENTS.md "Endpoints": the secret is shown at creation and at
 * rotation only, never in reads or in the logs; the URL is `https://` and passes the outbound-
 * address policy (loopback, private, metadata, IPv4-mapped IPv6, and names resolving to any of
 * them are refused); another tenant's endpoint or event is 404; the log lists newest first with
 * its filters, and redelivery schedules the event again.
 */
import t from 'tap';
import { isIP } from 'node:net';
import type { HostResolver } from '../../src/common/outbound-policy.js';
import type { EventRecord } from '../../src/storage/index.js';
import { buildApp } from '../support/build-app.js';

const PUBLIC_V4 = '93.184.215.14';
const HOSTS: Record<string, string[]> = {
  'hooks.example.test': [PUBLIC_V4],
  'loopback.example.test': ['127.0.0.1'],
  'mixed.example.test': [PUBLIC_V4, '10.0.0.7'],
  'metadata.example.test': ['169.254.169.254'],
  'mapped.example.test': ['::ffff:192.168.1.1'],
};
const resolveHost: HostResolver = (host) =>
  HOSTS[host] ? Promise.resolve(HOSTS[host].map((address) => ({ address, family: isIP(address) }))) : Promise.reject(Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' }));

t.test('an endpoint\'s secret is shown when created and rotated, never read back or logged; another tenant gets 404', async (t) => {
  const h = await buildApp(t, { resolveHost });
  const acme = await h.createTenant('Acme');
  const globex = await h.createTenant('Globex');
  const json = (auth: Record<string, string>) => ({ ...auth, 'content-type': 'application/json' });
  const created = await h.request({ method: 'POST', url: '/v1/webhook-endpoints', headers: json(acme.auth), payload: JSON.stringify({ url: 'https://hooks.example.test/in', description: 'billing' }) });
  t.equal(created.statusCode, 201, created.body);
  const endpoint = JSON.parse(created.body) as { id: string; secret: string; events: string[] };
  t.match(endpoint, { id: /^whe_/, url: 'https://hooks.example.test/in', events: ['*'], description: 'billing', disabled: false, secret: /^whsec_[0-9A-Za-z]{32,}$/ });

  const read = await h.request({ method: 'GET', url: `/v1/webhook-endpoints/${endpoint.id}`, headers: acme.auth });
  t.equal(read.statusCode, 200);
  t.notOk('secret' in JSON.parse(read.body), 'no secret in a read');
  const list = await h.request({ method: 'GET', url: '/v1/webhook-endpoints', headers: acme.auth });
  t.notOk(list.body.includes(endpoint.secret.slice(6)), 'no secret in the list');

  const patched = await h.request({ method: 'PATCH', url: `/v1/webhook-endpoints/${endpoint.id}`, headers: json(acme.auth), payload: JSON.stringify({ events: ['call.ended', 'call.dtmf'], disabled: true }) });
  t.equal(patched.statusCode, 200, patched.body);
  t.match(JSON.parse(patched.body), { events: ['call.ended', 'call.dtmf'], disabled: true });
  t.notOk('secret' in JSON.parse(patched.body));

  const rotated = await h.request({ method: 'POST', url: `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, headers: acme.auth });
  t.equal(rotated.statusCode, 200, rotated.body);
  const newSecret = (JSON.parse(rotated.body) as { secret: string }).secret;
  t.not(newSecret, endpoint.secret);
  t.same(await h.store.webhookEndpoints.secrets(acme.tenant.id, endpoint.id), [newSecret, endpoint.secret], 'both sign during the rotation');

  for (const [method, url, payload] of [
    ['GET', `/v1/webhook-endpoints/${endpoint.id}`], ['PATCH', `/v1/webhook-endpoints/${endpoint.id}`, '{"disabled":false}'],
    ['POST', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`], ['GET', `/v1/webhook-endpoints/${endpoint.id}/deliveries`],
    ['DELETE', `/v1/webhook-endpoints/${endpoint.id}`],
  ] as const) {
    const res = await h.request({ method, url, headers: json(globex.auth), ...(payload ? { payload } : {}) });
    t.equal(res.statusCode, 404, `${method} ${url} by another tenant`);
    t.equal((JSON.parse(res.body) as { code: string }).code, 'not_found');
  }
  t.same((await h.store.webhookEndpoints.secrets(acme.tenant.id, endpoint.id))?.[0], newSecret, 'the other tenant changed nothing');
  t.notOk(h.logLines.join('').includes(endpoint.secret.slice(6)) || h.logLines.join('').includes(newSecret.slice(6)), 'no secret in the logs');

  t.equal((await h.request({ method: 'DELETE', url: `/v1/webhook-endpoints/${endpoint.id}`, headers: acme.auth })).statusCode, 204);
  t.equal((await h.request({ method: 'GET', url: `/v1/webhook-endpoints/${endpoint.id}`, headers: acme.auth })).statusCode, 404);
});

t.test('docs/SECURITY.md "Outbound addresses": an endpoint URL that is or resolves to a non-public address is refused, as is http://', async (t) => {
  const h = await buildApp(t, { resolveHost });
  const acme = await h.createTenant('Acme');
  const refusedUrls = [
    'https://127.0.0.1/x', 'https://10.0.0.1/x', 'https://169.254.169.254/latest/meta-data/', 'https://[::1]/x', 'https://[::ffff:10.0.0.1]/x',
    'https://loopback.example.test/x', 'https://mixed.example.test/x', 'https://metadata.example.test/x', 'https://mapped.example.test/x',
    'http://hooks.example.test/x', 'ftp://hooks.example.test/x', 'not a url', 'https://user:pw@hooks.example.test/x',
  ];
  for (const url of refusedUrls) {
    const res = await h.request({ method: 'POST', url: '/v1/webhook-endpoints', headers: { ...acme.auth, 'content-type': 'application/json' }, payload: JSON.stringify({ url }) });
    t.equal(res.statusCode, 400, url);
    t.match(JSON.parse(res.body), { code: 'validation_failed', errors: [{ path: '/url' }] }, url);
  }
  const bad = await h.request({ method: 'POST', url: '/v1/webhook-endpoints', headers: { ...acme.auth, 'content-type': 'application/json' }, payload: JSON.stringify({ url: 'https://hooks.example.test/', events: ['call.nope'] }) });
  t.equal(bad.statusCode, 400, 'an unknown event type');
  t.same((await h.store.webhookEndpoints.list(acme.tenant.id, { limit: 10 })).items, [], 'nothing was stored');
  const allowed = await buildApp(t, { resolveHost, options: { eventsAllowHttp: true } });
  const other = await allowed.createTenant('Acme');
  const http = await allowed.request({ method: 'POST', url: '/v1/webhook-endpoints', headers: { ...other.auth, 'content-type': 'application/json' }, payload: JSON.stringify({ url: 'http://hooks.example.test/x' }) });
  t.equal(http.statusCode, 201, 'http:// where events.allow_http allows it');
});

t.test('the event log: newest first, type (with a prefix form) and call filters, redelivery; another tenant\'s event is 404', async (t) => {
  const h = await buildApp(t, { resolveHost });
  const acme = await h.createTenant('Acme');
  const globex = await h.createTenant('Globex');
  await h.store.webhookEndpoints.create(acme.tenant.id, { url: 'https://hooks.example.test/', events: ['*'], description: null, secret: 'whsec_x' });
  const stored: EventRecord[] = [];
  for (const [type, callId] of [['call.initiated', 'call_a'], ['call.transfer.started', 'call_a'], ['call.ended', 'call_b']] as const) {
    stored.push(...await h.store.events.append(acme.tenant.id, [{ type, callId, data: { call: { id: callId } } }]));
    h.clock.advance(10);
  }
  const list = async (query: string, auth = acme.auth) => JSON.parse((await h.request({ method: 'GET', url: `/v1/events${query}`, headers: auth })).body) as { data: { id: string; type: string }[]; has_more: boolean; next_cursor: string | null };
  t.same((await list('')).data.map((e) => e.type), ['call.ended', 'call.transfer.started', 'call.initiated'], 'newest first');
  t.same((await list('?type=call.transfer.*')).data.map((e) => e.type), ['call.transfer.started']);
  t.same((await list('?type=call.*&call_id=call_a')).data.map((e) => e.type), ['call.transfer.started', 'call.initiated']);
  const first = await list('?limit=2');
  t.equal(first.has_more, true);
  t.same((await list(`?limit=2&cursor=${first.next_cursor!}`)).data.map((e) => e.type), ['call.initiated']);
  t.match((await list('')).data[0], { id: stored[2]!.id, api_version: '1.0.0', data: { call: { id: 'call_b' } } }, 'the envelope as delivered');
  t.same((await list('', globex.auth)).data, [], 'another tenant\'s log is empty');
  t.equal((await h.request({ method: 'GET', url: '/v1/events?type=DROP TABLE', headers: acme.auth })).statusCode, 400);

  const redeliver = (auth: Record<string, string>) => h.request({ method: 'POST', url: `/v1/events/${stored[0]!.id}/redeliver`, headers: auth });
  t.equal((await redeliver(globex.auth)).statusCode, 404, 'another tenant\'s event');
  const res = await redeliver(acme.auth);
  t.equal(res.statusCode, 202);
  t.same(JSON.parse(res.body), { event_id: stored[0]!.id, deliveries: 1 });
});
