/**
 * @module The control API listening on 127.0.0.1 with two tenants that hold data (numbers, an
 * agent with its route, a SIP credential, calls with a transcript and a recording), a revoked key
 * and session cookies, for the reliability suites that send real HTTP to every operation.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildApp, type AppHarness, type TestTenant } from '../../support/build-app.js';
import { FakeCallControl } from '../../support/fake-call-control.js';
import type { ApiOptions } from '../../../src/control-api/app.js';
import type { TenantId } from '../../../src/common/ids.js';
import type { WebhookOptions } from '../../../src/post-call/index.js';
import { send, type HttpAnswer, type HttpRequest } from './api-http.js';
import { sqliteOf } from '../../support/sqlite-of.js';

interface TestContext {
  teardown(fn: () => void | Promise<void>): void;
}

/** Ids of one tenant's resources, by the collection path that serves them. */
export type OwnedIds = Record<string, string>;

export interface WorldTenant extends TestTenant {
  ids: OwnedIds;
  /** A call_control_id of an active call, and a number the tenant holds. */
  callControlId: string;
  heldNumber: string;
  /** Session cookies (`gateway_session=…`) made from the live and the sandbox key. */
  liveCookie: string;
  sandboxCookie: string;
}

export interface ApiWorld {
  h: AppHarness;
  base: string;
  /** `http://127.0.0.1:PORT`, the Origin a same-origin browser request carries. */
  ownOrigin: string;
  owner: WorldTenant;
  intruder: WorldTenant;
  /** A key of the owner that was revoked, and an owner session revoked by logout. */
  revokedKey: string;
  revokedCookie: string;
  fake: FakeCallControl;
  send(request: HttpRequest): Promise<HttpAnswer>;
  /** The OpenAPI document the app serves. */
  document: Record<string, unknown>;
  /** Every stored row a request could change (sessions and idempotency records aside), as text. */
  storeSnapshot(): string;
}

/**
 * Tables a rejected request must leave alone. Sessions are left out (each authenticated request
 * touches its session) and so are idempotency records (a command's 4xx is stored for replay).
 */
const SNAPSHOT_TABLES = ['tenants', 'api_keys', 'numbers', 'sip_credentials', 'agents', 'routes', 'calls', 'transcripts', 'webhook_deliveries', 'recordings',
  'webhook_endpoints', 'events', 'event_deliveries', 'event_delivery_attempts'];

/** The collections whose members appear as `{id}` in paths, and the id prefix of each. */
export const ID_PREFIX: Record<string, string> = {
  '/v1/agents': 'agt_', '/v1/routes': 'rte_', '/v1/sip-credentials': 'sipc_', '/v1/calls': 'call_',
  '/v1/webhook-endpoints': 'whe_', '/v1/events': 'evt_',
};

/** Public address for the agent URL check, so no test depends on DNS. */
const PUBLIC_ADDRESS = '93.184.216.34';

async function listen(h: AppHarness, t: TestContext): Promise<{ server: Server; base: string }> {
  const callback = h.api.app.callback();
  const server = createServer((req, res) => { void callback(req, res); });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  const { port } = server.address() as AddressInfo;
  return { server, base: `http://127.0.0.1:${port}` };
}

async function login(base: string, apiKey: string): Promise<string> {
  const answer = await send(base, { method: 'POST', path: '/v1/auth/login', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: apiKey }) });
  if (answer.status !== 204) throw new Error(`login answered ${answer.status}: ${answer.text}`);
  const match = /gateway_session=[^;]+/.exec(String(answer.headers['set-cookie'] ?? ''));
  if (!match) throw new Error('login set no session cookie');
  return match[0];
}

async function placeActiveCall(world: { h: AppHarness; fake: FakeCallControl }, tenantId: TenantId, n: number): Promise<{ id: string; controlId: string }> {
  const placed = await world.fake.place({ tenantId, from: '+15550100', to: `+1555019${n}`, carrier: 'telnyx', agentUrl: 'wss://agent.example.com/s', record: true });
  if (!('call' in placed)) throw new Error('the fake engine refused a call');
  const call = { ...placed.call, state: 'active' as const, answered_at: placed.call.created_at };
  await world.h.store.calls.save(call);
  return { id: call.id, controlId: call.call_control_id };
}

async function seedTenant(world: { h: AppHarness; fake: FakeCallControl; base: string }, name: string, n: number): Promise<WorldTenant> {
  const { h, base } = world;
  const tenant = await h.createTenant(name);
  const did = `+1555010${n}`;
  await h.store.numbers.add(tenant.tenant.id, did, 'sandbox');
  await h.store.numbers.add(tenant.tenant.id, `+1555011${n}`, 'telnyx');
  const json = { 'content-type': 'application/json', ...tenant.auth };
  const imported = await send(base, {
    method: 'POST', path: '/v1/agents/import', headers: json,
    body: JSON.stringify({ provider: 'custom', external_agent_id: `ext-${n}`, sip_uri: 'sip:agent@edge.example.net', did_number: did }),
  });
  const cred = await send(base, { method: 'POST', path: '/v1/sip-credentials', headers: json, body: JSON.stringify({ username: `gw${n}`, password: 'secret-password' }) });
  const endpoint = await send(base, { method: 'POST', path: '/v1/webhook-endpoints', headers: json, body: JSON.stringify({ url: `https://hooks${n}.example.com/events` }) });
  if (imported.status !== 200 || cred.status !== 201 || endpoint.status !== 201) throw new Error(`seeding ${name}: ${imported.text} ${cred.text}`);
  const agent = imported.json as { id: string; route: { id: string } };
  const call = await placeActiveCall(world, tenant.tenant.id, n);
  await placeActiveCall(world, tenant.tenant.id, n + 5);
  const [event] = await h.store.events.append(tenant.tenant.id, [{ type: 'call.answered', callId: call.id, data: { call: { id: call.id } } }]);
  await h.store.transcripts.save(call.id, 'gateway', [{ role: 'caller', text: 'hello', offset_s: 0.5 }]);
  const recording = `recording-${n}.wav`;
  // Stored paths are relative to the recordings folder (docs/ARCHITECTURE.md "Process roles").
  mkdirSync(join(h.dataDir, 'recordings'), { recursive: true });
  writeFileSync(join(h.dataDir, 'recordings', recording), Buffer.alloc(64));
  await h.store.sipTraces.save(tenant.tenant.id, call.id, new Date(0).toISOString(), { legs: [{ leg: 'carrier', sip_call_id: `seed-${n}` }], messages: [], dropped_messages: 0 });
  const stored = await h.store.calls.get(tenant.tenant.id, call.id);
  if (stored) await h.store.calls.save({ ...stored, recording_path: recording });
  return {
    ...tenant,
    ids: { '/v1/agents': agent.id, '/v1/routes': agent.route.id, '/v1/sip-credentials': (cred.json as { id: string }).id, '/v1/calls': call.id,
      '/v1/webhook-endpoints': (endpoint.json as { id: string }).id, '/v1/events': event!.id },
    callControlId: call.controlId, heldNumber: `+1555011${n}`,
    liveCookie: await login(base, tenant.apiKey), sandboxCookie: await login(base, tenant.sandboxKey),
  };
}

/**
 * Starts the app on a free port and seeds it. Rate limits are high unless `options` says otherwise;
 * `webhookSecrets` turns on the post-call webhooks' signature check.
 */
export async function startApiWorld(t: TestContext, options: Partial<ApiOptions> = {}, webhookSecrets: WebhookOptions['secrets'] = {}): Promise<ApiWorld> {
  let fake: FakeCallControl | undefined;
  const h = await buildApp(t, {
    webhooks: { secrets: webhookSecrets },
    options: { rateLimitPerSecond: 1_000_000, rateLimitBurst: 1_000_000, ...options },
    callControl: ({ store, clock }) => (fake = new FakeCallControl(store.calls, clock)),
    resolveHost: () => Promise.resolve([{ address: PUBLIC_ADDRESS, family: 4 }]),
  });
  if (!fake) throw new Error('the call control was not built');
  const { base } = await listen(h, t);
  const world = { h, fake, base };
  const owner = await seedTenant(world, 'Acme', 1);
  const intruder = await seedTenant(world, 'Globex', 2);
  const revokedKey = (await h.store.apiKeys.create(owner.tenant.id, 'live')).apiKey;
  const revokedCookie = await login(base, revokedKey);
  await h.store.apiKeys.revoke(revokedKey);
  const reads = SNAPSHOT_TABLES.map((table) => sqliteOf(h.store).prepare(`SELECT * FROM ${table} ORDER BY rowid`));
  const document = (await send(base, { method: 'GET', path: '/v1/openapi.json' })).json as Record<string, unknown>;
  return {
    h, base, ownOrigin: base, owner, intruder, revokedKey, revokedCookie, fake, document,
    send: (request) => send(base, request),
    storeSnapshot: () => reads.map((read) => JSON.stringify(read.all())).join('\n'),
  };
}

/**
 * Fills each `{name}` of an OpenAPI path: an `{id}` with the tenant's resource of the collection
 * before it (or, for a collection nobody seeded, a well-formed id that does not exist).
 */
export function fillPath(path: string, ids: OwnedIds, missing = false): string {
  return path.replace(/\{(\w+)\}/g, (_m, _name: string, offset: number) => {
    const collection = path.slice(0, offset - 1);
    const prefix = ID_PREFIX[collection] ?? 'x_';
    const id = ids[collection];
    return missing || id === undefined ? `${prefix}never0000000000000000` : encodeURIComponent(id);
  });
}
