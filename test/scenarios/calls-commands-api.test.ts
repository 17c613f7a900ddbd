/**
 * docs/API.md "Errors" and docs/API.md "Calls": the call command endpoints (place, hold, unhold, hangup, transfer)
 * and Idempotency-Key, over the real API and store with an in-memory CallControl.
 */
import t, { type Test } from 'tap';
import type { Response } from 'light-my-request';
import { isIP } from 'node:net';
import type { HostResolver } from '../../src/common/outbound-policy.js';
import { Validator } from '@seriousme/openapi-schema-validator';
import { isoTime } from '../../src/common/time.js';
import type { ApiOptions } from '../../src/control-api/app.js';
import { buildApp, type AppHarness, type TestTenant } from '../support/build-app.js';
import { callRecord } from '../support/call-records.js';
import { FakeCallControl } from '../support/fake-call-control.js';
import { assertTenantIsolation } from '../support/tenant-isolation.js';

const PUBLIC_V4 = '93.184.215.14';
const DNS: Record<string, string[]> = {
  'agent.example.com': [PUBLIC_V4, '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
  'mixed.example.com': [PUBLIC_V4, '10.0.0.7'],
  'internal.example.com': ['192.168.1.20'],
  'metadata.example.com': ['169.254.169.254'],
};
const resolveHost: HostResolver = (host) => {
  const found = DNS[host];
  return found ? Promise.resolve(found.map((address) => ({ address, family: isIP(address) }))) : Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }));
};

const CALL = { from: '+15550100', to: '+15550199', carrier: 'telnyx', agent_ws_url: 'wss://agent.example.com/stream' };

interface Setup { h: AppHarness; fake: FakeCallControl; acme: TestTenant }

async function setup(t: Test, options: Partial<ApiOptions> = {}): Promise<Setup> {
  let fake: FakeCallControl | undefined;
  const h = await buildApp(t, { options, resolveHost, callControl: ({ store, clock }) => (fake = new FakeCallControl(store.calls, clock)) });
  return { h, fake: fake!, acme: await h.createTenant('Acme') };
}

function expectProblem(t: Test, res: Response, status: number, code: string): Record<string, unknown> {
  t.equal(res.statusCode, status, `${code}: status`);
  t.equal(res.headers['content-type'], 'application/problem+json', `${code}: problem+json`);
  const body = JSON.parse(res.body) as Record<string, unknown>;
  t.equal(body.code, code);
  t.equal(body.request_id, res.headers['x-request-id'], `${code}: request_id matches X-Request-Id`);
  return body;
}

const place = (h: AppHarness, who: TestTenant | string, payload: unknown, key?: string) => h.request({
  method: 'POST', url: '/v1/calls', payload: payload as Record<string, unknown>,
  headers: { authorization: typeof who === 'string' ? `Bearer ${who}` : who.auth.authorization, ...(key === undefined ? {} : { 'idempotency-key': key }) },
});
const paths = (body: Record<string, unknown>) => (body.errors as { path: string }[]).map((e) => e.path).sort();

t.test('docs/API.md "Calls": POST /v1/calls answers 200 with the initiated call; record defaults to false', async (t) => {
  const { h, fake, acme } = await setup(t);
  const res = await place(h, acme, CALL);
  t.equal(res.statusCode, 200);
  const call = JSON.parse(res.body);
  t.match(call, { direction: 'outbound', state: 'initiated', on_hold: false, from: CALL.from, to: CALL.to, carrier: 'telnyx', record: false,
    agent: { type: 'websocket', url: CALL.agent_ws_url }, ended_at: null, transfer: null });
  t.match(call.id, /^call_/);
  t.equal(res.headers['idempotent-replayed'], undefined, 'a first response is not a replay');
  t.same(fake.placed, [{ tenantId: acme.tenant.id, from: CALL.from, to: CALL.to, carrier: 'telnyx', agentUrl: CALL.agent_ws_url, record: false, machineDetection: 'off' }], 'machine_detection defaults to off');
  const detail = JSON.parse((await h.request({ method: 'GET', url: `/v1/calls/${call.id}`, headers: acme.auth })).body);
  t.match(detail, { id: call.id, state: 'initiated', session: { phase: 'setup', local_rtp_port: 0 } }, 'the detail reads the session through CallControl');
  t.equal(JSON.parse((await place(h, acme, { ...CALL, record: true })).body).record, true);
});

t.test('docs/API.md "Requests and responses" and docs/API.md "Errors": validation errors name the fields; nothing is placed', async (t) => {
  const { h, fake, acme } = await setup(t);
  t.same(paths(expectProblem(t, await place(h, acme, {}), 400, 'validation_failed')), ['/carrier', '/from', '/to']);
  // docs/API.md "Call commands": the agent is agent_ws_url or agent_id, exactly one, checked once the body's shape is valid.
  const { agent_ws_url: _url, ...noAgent } = CALL;
  t.same(paths(expectProblem(t, await place(h, acme, noAgent), 400, 'validation_failed')), ['/agent_ws_url'], 'no agent: named');
  t.same(paths(expectProblem(t, await place(h, acme, { ...CALL, to: '5550199', from: '+0123' }), 400, 'validation_failed')), ['/from', '/to'], 'E.164 with the field named');
  t.same(paths(expectProblem(t, await place(h, acme, { ...CALL, extra: 1 }), 400, 'validation_failed')), ['/extra'], 'unknown fields are refused');
  t.same(paths(expectProblem(t, await place(h, acme, { ...CALL, record: 'yes' }), 400, 'validation_failed')), ['/record']);
  for (const url of ['https://agent.example.com/stream', 'agent.example.com', 'ws://', 'ws://exa mple.com/']) {
    t.same(paths(expectProblem(t, await place(h, acme, { ...CALL, agent_ws_url: url }), 400, 'validation_failed')), ['/agent_ws_url'], url);
  }
  t.equal(fake.placed.length, 0);
});

t.test('docs/API.md "Errors": an unknown carrier is 400 unknown_carrier', async (t) => {
  const { h, fake, acme } = await setup(t);
  const body = expectProblem(t, await place(h, acme, { ...CALL, carrier: 'nowhere' }), 400, 'unknown_carrier');
  t.same(paths(body), ['/carrier']);
  t.equal(fake.placed.length, 0);
});

t.test('docs/API.md "Errors": sandbox keys use the sandbox carrier only, live keys never (403 sandbox_mismatch)', async (t) => {
  const { h, fake, acme } = await setup(t);
  expectProblem(t, await place(h, acme.sandboxKey, CALL), 403, 'sandbox_mismatch');
  expectProblem(t, await place(h, acme, { ...CALL, carrier: 'sandbox' }), 403, 'sandbox_mismatch');
  t.equal(fake.placed.length, 0);
  t.equal((await place(h, acme.sandboxKey, { ...CALL, carrier: 'sandbox' })).statusCode, 200, 'a sandbox key on the sandbox carrier');
});

t.test('docs/API.md "Calls": agent addresses on non-public networks are refused unless allowed', async (t) => {
  const { h, fake, acme } = await setup(t);
  const refused = [
    'ws://127.0.0.1:9000/agent', 'ws://10.1.2.3/agent', 'ws://169.254.169.254/latest', 'ws://[::1]:8080/', 'ws://localhost/',
    'wss://100.64.0.1/', 'ws://224.0.0.1/', 'ws://0.0.0.0/', 'ws://[::ffff:10.0.0.1]/', 'wss://[fe80::1]/',
    'wss://internal.example.com/agent', 'wss://mixed.example.com/agent', 'wss://metadata.example.com/',
    'wss://nowhere.example.net/agent',
  ];
  for (const url of refused) {
    const body = expectProblem(t, await place(h, acme, { ...CALL, agent_ws_url: url }), 400, 'validation_failed');
    t.same(paths(body), ['/agent_ws_url'], url);
  }
  t.equal(fake.placed.length, 0, 'none of them was placed');
  t.equal((await place(h, acme, { ...CALL, agent_ws_url: `ws://${PUBLIC_V4}:8080/a` })).statusCode, 200, 'a public literal address');

  const open = await setup(t, { allowPrivateAgentUrls: true });
  for (const url of ['ws://127.0.0.1:9000/agent', 'wss://internal.example.com/agent', 'ws://[::1]:8080/']) {
    t.equal((await place(open.h, open.acme, { ...CALL, agent_ws_url: url })).statusCode, 200, `allowed by configuration: ${url}`);
  }
});

t.test('docs/API.md "Calls": the same Idempotency-Key and body returns the first response and places one call', async (t) => {
  const { h, fake, acme } = await setup(t);
  const first = await place(h, acme, CALL, 'order-42');
  t.equal(first.statusCode, 200);
  h.clock.advance(23 * 3600_000);
  const reordered = { record: false, agent_ws_url: CALL.agent_ws_url, carrier: CALL.carrier, to: CALL.to, from: CALL.from };
  const again = await place(h, acme, reordered, 'order-42');
  t.equal(again.statusCode, 200);
  t.equal(again.body, first.body, 'the identical body (key order and the default record: false do not make another request)');
  t.equal(again.headers['idempotent-replayed'], 'true');
  t.equal(fake.placed.length, 1, 'place() ran once');

  const other = expectProblem(t, await place(h, acme, { ...CALL, to: '+15550198' }, 'order-42'), 409, 'idempotency_conflict');
  t.match(other.detail, /another request body/);
  t.equal(fake.placed.length, 1);

  const beta = await h.createTenant('Beta');
  const theirs = await place(h, beta, CALL, 'order-42');
  t.equal(theirs.statusCode, 200, "another tenant's same key is its own");
  t.not(JSON.parse(theirs.body).id, JSON.parse(first.body).id);
  t.equal(fake.placed.length, 2);

  h.clock.advance(2 * 3600_000); // 25 h after the first request
  const later = await place(h, acme, CALL, 'order-42');
  t.equal(later.statusCode, 200);
  t.equal(later.headers['idempotent-replayed'], undefined, 'a 25 h old key no longer replays');
  t.not(JSON.parse(later.body).id, JSON.parse(first.body).id, 'a new call');
  t.equal(fake.placed.length, 3);
  t.equal((await h.store.db.get<{ n: number }>('SELECT count(*) AS n FROM idempotency_keys WHERE tenant_id = ?', [acme.tenant.id]))?.n, 1, 'the expired row was purged');
});

t.test('docs/API.md "Errors": a duplicate while the first request runs is 409 idempotency_conflict', async (t) => {
  const { h, fake, acme } = await setup(t);
  const release = fake.holdPlacement();
  const first = place(h, acme, CALL, 'in-flight');
  for (let i = 0; i < 10_000 && fake.placed.length === 0; i++) await new Promise((resolve) => setImmediate(resolve));
  t.equal(fake.placed.length, 1, 'the first request is inside place()');
  const dup = expectProblem(t, await place(h, acme, CALL, 'in-flight'), 409, 'idempotency_conflict');
  t.match(dup.detail, /still in progress/);
  release();
  const done = await first;
  t.equal(done.statusCode, 200);
  const replay = await place(h, acme, CALL, 'in-flight');
  t.equal(replay.body, done.body, 'once answered, the key replays');
  t.equal(fake.placed.length, 1);
});

t.test('docs/API.md "Errors": Idempotency-Key must be 1 to 255 visible ASCII characters', async (t) => {
  const { h, fake, acme } = await setup(t);
  for (const key of ['', 'x'.repeat(256), 'two words', 'caf\u00e9']) {
    const res = await h.request({ method: 'POST', url: '/v1/calls', payload: CALL, headers: { ...acme.auth, 'idempotency-key': key } });
    t.same(paths(expectProblem(t, res, 400, 'validation_failed')), ['/headers/idempotency-key'], JSON.stringify(key.slice(0, 10)));
  }
  t.equal(fake.placed.length, 0);
  t.equal((await place(h, acme, CALL, 'x'.repeat(255))).statusCode, 200);
});

t.test('docs/API.md "Errors": 5xx outcomes are not stored (a retry runs again); 4xx outcomes replay', async (t) => {
  const { h, fake, acme } = await setup(t);
  fake.failNext({ error: 'carrier_unavailable', detail: 'no route to sip:gw.internal:5060' });
  const bad = expectProblem(t, await place(h, acme, CALL, 'k1'), 502, 'carrier_unavailable');
  t.notMatch(JSON.stringify(bad), /gw\.internal/, 'a 5xx carries no internals');
  fake.failNext({ error: 'unavailable', detail: 'out of RTP ports' });
  expectProblem(t, await place(h, acme, CALL, 'k1'), 503, 'unavailable');
  fake.failNext({ error: 'concurrency_limit', retryAfterSeconds: 3 });
  expectProblem(t, await place(h, acme, CALL, 'k1'), 429, 'concurrency_limit');
  const ok = await place(h, acme, CALL, 'k1');
  t.equal(ok.statusCode, 200, 'after a 502, a 503 and a 429 the same key places the call');
  t.equal(ok.headers['idempotent-replayed'], undefined);
  t.equal(fake.placed.length, 4);

  fake.failNext({ error: 'unknown_carrier' });
  const refused = expectProblem(t, await place(h, acme, CALL, 'k2'), 400, 'unknown_carrier');
  const replayed = await place(h, acme, CALL, 'k2');
  const again = expectProblem(t, replayed, 400, 'unknown_carrier');
  t.equal(replayed.headers['idempotent-replayed'], 'true');
  t.equal(again.detail, refused.detail);
  t.not(again.request_id, refused.request_id, 'the replayed problem names the request that got it');
  t.equal(fake.placed.length, 5, 'the 4xx was replayed, not placed again');
});

t.test('docs/API.md "Errors": command failures map to their status and code', async (t) => {
  const { h, fake, acme } = await setup(t);
  fake.failNext({ error: 'concurrency_limit', retryAfterSeconds: 7 });
  const limited = await place(h, acme, CALL);
  expectProblem(t, limited, 429, 'concurrency_limit');
  t.equal(limited.headers['retry-after'], '7');
  fake.failNext({ error: 'carrier_unavailable', detail: 'x' });
  expectProblem(t, await place(h, acme, CALL), 502, 'carrier_unavailable');
  fake.failNext({ error: 'unavailable', detail: 'draining' });
  expectProblem(t, await place(h, acme, CALL), 503, 'unavailable');
  const ringing = callRecord(acme.tenant.id, isoTime(h.clock.now()), { state: 'ringing', answered_at: null });
  await h.store.calls.insert(ringing);
  for (const command of ['hold', 'unhold']) {
    expectProblem(t, await h.request({ method: 'POST', url: `/v1/calls/${ringing.id}/${command}`, headers: acme.auth }), 409, 'call_not_active');
  }
  expectProblem(t, await h.request({ method: 'POST', url: '/v1/calls/call_never/hold', headers: acme.auth }), 404, 'not_found');
  fake.failNext({ error: 'not_found' });
  expectProblem(t, await place(h, acme, CALL), 404, 'not_found');
});

t.test('docs/API.md "Errors": without the engine, commands answer 503 unavailable and reads still work', async (t) => {
  const h = await buildApp(t, { resolveHost });
  const acme = await h.createTenant('Acme');
  const call = callRecord(acme.tenant.id, isoTime(h.clock.now()));
  await h.store.calls.insert(call);
  expectProblem(t, await place(h, acme, CALL), 503, 'unavailable');
  for (const command of ['hold', 'unhold', 'hangup']) {
    expectProblem(t, await h.request({ method: 'POST', url: `/v1/calls/${call.id}/${command}`, headers: acme.auth }), 503, 'unavailable');
  }
  expectProblem(t, await h.request({ method: 'POST', url: '/v1/calls/transfer', headers: acme.auth, payload: { call_control_id: call.call_control_id, to: '+15550111' } }), 503, 'unavailable');
  const detail = await h.request({ method: 'GET', url: `/v1/calls/${call.id}`, headers: acme.auth });
  t.equal(detail.statusCode, 200);
  t.equal(JSON.parse(detail.body).session, null);
});

t.test('docs/API.md "Calls": hold, unhold, hangup and transfer answer with the call', async (t) => {
  const { h, acme } = await setup(t);
  const call = callRecord(acme.tenant.id, isoTime(h.clock.now()));
  await h.store.calls.insert(call);
  const command = (name: string, extra: { payload?: string; headers?: Record<string, string> } = {}) =>
    h.request({ method: 'POST', url: `/v1/calls/${call.id}/${name}`, ...extra, headers: { ...acme.auth, ...extra.headers } });
  const json = { 'content-type': 'application/json' };

  const held = await command('hold');
  t.equal(held.statusCode, 200);
  t.match(JSON.parse(held.body), { id: call.id, state: 'active', on_hold: true });
  t.equal((await command('hold', { payload: '{}', headers: json })).statusCode, 200, 'hold is idempotent; {} is accepted');
  t.same(paths(expectProblem(t, await command('hold', { payload: '{"music": true}', headers: json }), 400, 'validation_failed')), ['/music']);
  expectProblem(t, await command('hold', { payload: '[]', headers: json }), 400, 'validation_failed');
  expectProblem(t, await command('hold', { payload: 'now', headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type');
  t.match(JSON.parse((await command('unhold', { payload: '', headers: json })).body), { on_hold: false }, 'an empty body is accepted');

  const transfer = (payload: Record<string, unknown>) => h.request({ method: 'POST', url: '/v1/calls/transfer', headers: acme.auth, payload });
  t.same(paths(expectProblem(t, await transfer({}), 400, 'validation_failed')), ['/call_control_id', '/to']);
  t.same(paths(expectProblem(t, await transfer({ call_control_id: call.call_control_id, to: '0044 20' }), 400, 'validation_failed')), ['/to']);
  expectProblem(t, await transfer({ call_control_id: 'v1:never', to: '+442071234567' }), 404, 'not_found');
  const moved = await transfer({ call_control_id: call.call_control_id, to: '+442071234567' });
  t.equal(moved.statusCode, 200);
  t.match(JSON.parse(moved.body), { id: call.id, transfer: { to: '+442071234567', state: 'dialing', started_at: isoTime(h.clock.now()) } });

  const ended = await command('hangup');
  t.match(JSON.parse(ended.body), { id: call.id, state: 'ended', ended_at: isoTime(h.clock.now()) });
  expectProblem(t, await command('hangup'), 409, 'call_not_active');
  expectProblem(t, await command('hold'), 409, 'call_not_active');
  expectProblem(t, await transfer({ call_control_id: call.call_control_id, to: '+442071234567' }), 409, 'call_not_active');
});

t.test(`docs/API.md "Authentication": another tenant's call answers like a missing one for every command`, async (t) => {
  const { h, acme } = await setup(t);
  const intruder = await h.createTenant('Intruder');
  const call = callRecord(acme.tenant.id, isoTime(h.clock.now()));
  await h.store.calls.insert(call);
  const post = (url: string, payload?: Record<string, unknown>) => ({ method: 'POST' as const, url, ...(payload ? { payload } : {}) });
  await assertTenantIsolation(t, h, acme, intruder, [
    { name: 'hold', request: post(`/v1/calls/${call.id}/hold`), missing: post('/v1/calls/call_never/hold'), ownerStatus: 200 },
    { name: 'unhold', request: post(`/v1/calls/${call.id}/unhold`), missing: post('/v1/calls/call_never/unhold'), ownerStatus: 200 },
    {
      name: 'transfer', request: post('/v1/calls/transfer', { call_control_id: call.call_control_id, to: '+15550111' }),
      missing: post('/v1/calls/transfer', { call_control_id: 'v1:never', to: '+15550111' }), ownerStatus: 200,
    },
    { name: 'hangup', request: post(`/v1/calls/${call.id}/hangup`), missing: post('/v1/calls/call_never/hangup'), ownerStatus: 200 },
  ]);
});

t.test('docs/API.md "Requests and responses": the call commands are in the OpenAPI document, which stays valid', async (t) => {
  const { h } = await setup(t);
  const doc = JSON.parse((await h.request({ method: 'GET', url: '/v1/openapi.json' })).body);
  const result = await new Validator().validate(doc);
  t.same(result.errors ?? [], [], 'valid OpenAPI 3.1');
  const placeOp = doc.paths['/v1/calls'].post;
  const placeBody = placeOp.requestBody.content['application/json'].schema;
  t.same(placeBody.required.sort(), ['carrier', 'from', 'to']);
  t.ok(placeBody.properties.agent_ws_url && placeBody.properties.agent_id, 'the agent is agent_ws_url or agent_id, documented both');
  t.ok(placeOp.responses['200'].headers['Idempotent-Replayed']);
  for (const code of ['400', '403', '409', '429', '502', '503']) t.ok(placeOp.responses[code], `POST /v1/calls documents ${code}`);
  for (const path of ['/v1/calls/{id}/hold', '/v1/calls/{id}/unhold', '/v1/calls/{id}/hangup', '/v1/calls/transfer']) {
    const op = doc.paths[path].post;
    t.ok(op.summary && op.responses['200'] && op.responses['404'] && op.responses['409'] && op.responses['503'], path);
  }
});
