/**
 * docs/ARCHITECTURE.md "Process roles" and docs/DECISIONS.md "The live call list of an api
 * process": an `api` process serves a page of the live call list again for
 * `api.live_list_cache_ms` without reading the store, one read for requests that arrive together,
 * and reads again once the page is out of date or once the tenant's own command went through it.
 * Pages never cross tenants or key scopes; `state=ended` and the history always read the store; 0
 * reads on every request. The api process runs here on loopback over a real data folder, on a
 * fake clock; the engine is this test writing the calls table, and a fake internal endpoint.
 */
import t, { type Test } from 'tap';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { FakeClock } from '../../src/common/clock.js';
import type { TenantId } from '../../src/common/ids.js';
import { createLogger } from '../../src/common/logger.js';
import { SecretBox } from '../../src/common/secret-box.js';
import { loadConfig } from '../../src/config/load-config.js';
import { loadMasterKey } from '../../src/config/master-key.js';
import { LiveListCache } from '../../src/control-api/routes/calls/live-list-cache.js';
import { startApiProcess } from '../../src/gateway/role-api.js';
import { CallRepository, databasePath, openStore, type CallRecord, type Store } from '../../src/storage/index.js';
import { callRecord } from '../support/call-records.js';
import { waitFor } from '../support/gateway-harness.js';

const SECRET = randomBytes(24).toString('hex');

/** Every read of the calls list in this process (the api process's; the test's own store never lists). */
interface ListRead { tenantId: string; state: string | undefined }

/**
 * Counts the store's list reads and, while `hold` is set, keeps each one's page waiting for it. The
 * cache's own `page` calls are counted too: they say when concurrent requests have all arrived.
 */
function watchReads(t: Test): { reads: ListRead[]; pageCalls: () => number; hold: (gate: Promise<void> | undefined) => void } {
  // eslint-disable-next-line @typescript-eslint/unbound-method -- put back, and called with its own `this`
  const list = CallRepository.prototype.list;
  // eslint-disable-next-line @typescript-eslint/unbound-method -- the same
  const page = LiveListCache.prototype.page;
  const reads: ListRead[] = [];
  let pageCalls = 0;
  let gate: Promise<void> | undefined;
  CallRepository.prototype.list = async function (this: CallRepository, ...args: Parameters<CallRepository['list']>) {
    const held = gate;
    reads.push({ tenantId: args[0], state: args[1].state });
    // Held after the read: the page is what the store had when it was asked.
    const page = await list.apply(this, args);
    if (held) await held;
    return page;
  };
  LiveListCache.prototype.page = function (this: LiveListCache<unknown>, ...args: Parameters<LiveListCache<unknown>['page']>) {
    pageCalls += 1;
    return page.apply(this, args);
  };
  t.teardown(() => {
    CallRepository.prototype.list = list;
    LiveListCache.prototype.page = page;
  });
  return { reads, pageCalls: () => pageCalls, hold: (next) => { gate = next; } };
}

/** A stand-in engine: its internal endpoint answers the commands, writing the calls table as an engine does. */
async function fakeEngine(t: Test, store: Store, nextTime: () => string): Promise<void> {
  const answer = async (command: string, args: Record<string, string>): Promise<unknown> => {
    if (command === 'carrierNames') return ['sandbox', 'telnyx'];
    if (command === 'place') {
      const call = callRecord(args.tenantId as TenantId, nextTime(), { carrier: args.carrier!, from_number: args.from!, to_number: args.to!, state: 'initiated', answered_at: null });
      await store.calls.insert(call);
      return { call };
    }
    const call = await store.calls.get(args.tenantId as TenantId, args.callId!);
    if (!call) return { error: 'not_found' };
    const changed: CallRecord = command === 'hangup'
      ? { ...call, state: 'ended', ended_at: nextTime(), end_reason: 'completed', hangup_by: 'api' }
      : { ...call, on_hold: command === 'hold' };
    await store.calls.save(changed);
    return { call: changed };
  };
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => { text += chunk.toString('utf8'); });
    req.on('end', () => {
      const command = req.url!.split('/').pop()!;
      answer(command, JSON.parse(text) as Record<string, string>).then(
        (result) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ result })),
        (err: Error) => res.writeHead(500).end(err.message),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  await store.nodes.register({ id: 'engine-a', internalUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, liveCalls: 0 });
}

interface Rig {
  base: string;
  clock: FakeClock;
  /** The engine's side of the data folder. */
  engine: Store;
  tenantId: TenantId;
  sandboxKey: string;
  reads: ListRead[];
  pageCalls: () => number;
  hold: (gate: Promise<void> | undefined) => void;
  /** Distinct, rising creation times. */
  nextTime: () => string;
}

async function startApi(t: Test, cacheMs: string): Promise<Rig> {
  const dir = t.testdir({});
  const config = loadConfig({
    env: {
      VGW_DATA_DIR: join(dir, 'data'), VGW_ROLE: 'api', VGW_CLUSTER_SECRET: SECRET, VGW_HTTP_PORT: '0', VGW_LOG_LEVEL: 'silent',
      VGW_ALLOW_PRIVATE_AGENT_URLS: 'true', VGW_API_LIVE_LIST_CACHE_MS: cacheMs,
    },
    cwd: dir,
  });
  t.equal(config.api.live_list_cache_ms, Number(cacheMs));
  const watch = watchReads(t);
  const clock = new FakeClock(Date.parse('2026-03-01T12:00:00.000Z'));
  let announced = '';
  const api = await startApiProcess({ config, logger: createLogger({ level: 'silent' }), clock, announce: (text) => { announced += text; } });
  t.teardown(() => api.stop('test'));
  const engine = await openStore(databasePath(config.data_dir), clock, { idleMs: 60_000, absoluteMs: 3_600_000 },
    new SecretBox(loadMasterKey(config.secret_key, config.data_dir)), { nodeId: 'engine-a' });
  t.teardown(() => engine.close());
  let second = 0;
  const nextTime = (): string => new Date(Date.parse('2026-03-01T11:00:00.000Z') + 1000 * second++).toISOString();
  return {
    base: `http://127.0.0.1:${api.httpPort}`, clock, engine, nextTime, ...watch,
    tenantId: /tenant id: +(ten_\w+)/.exec(announced)![1] as TenantId,
    sandboxKey: /sandbox key: (vgw_test_\w+)/.exec(announced)![1]!,
  };
}

interface CallPage { data: { id: string; on_hold: boolean }[]; has_more: boolean; next_cursor: string | null }

async function get(rig: Rig, key: string, path = '/v1/calls'): Promise<CallPage> {
  const res = await fetch(`${rig.base}${path}`, { headers: { authorization: `Bearer ${key}` } });
  const body = await res.json() as CallPage;
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

const ids = (page: CallPage): string[] => page.data.map((c) => c.id);

t.test('a page is served again within the fresh-for time without reading the store, and read again after it', async (t) => {
  const rig = await startApi(t, '250');
  const first = callRecord(rig.tenantId, rig.nextTime(), { carrier: 'sandbox' });
  await rig.engine.calls.insert(first);
  t.same(ids(await get(rig, rig.sandboxKey)), [first.id]);
  t.equal(rig.reads.length, 1, 'the first request reads the store');

  const second = callRecord(rig.tenantId, rig.nextTime(), { carrier: 'sandbox' });
  await rig.engine.calls.insert(second);
  t.same(ids(await get(rig, rig.sandboxKey)), [first.id], 'the page held is served: the engine\'s new call is not seen yet');
  rig.clock.advance(249);
  t.same(ids(await get(rig, rig.sandboxKey)), [first.id], 'still fresh 249 ms after its read');
  t.equal(rig.reads.length, 1, 'no store read for either');
  const held = await fetch(`${rig.base}/v1/calls`, { headers: { authorization: `Bearer ${rig.sandboxKey}` } });
  t.equal(held.headers.get('content-type'), 'application/json; charset=utf-8', 'a held page is JSON as a page read is');
  t.same(ids(await held.json() as CallPage), [first.id]);

  rig.clock.advance(1);
  t.same(ids(await get(rig, rig.sandboxKey)), [second.id, first.id], 'out of date at 250 ms: read again');
  t.equal(rig.reads.length, 2);
  const metrics = await (await fetch(`${rig.base}/metrics`)).text();
  t.match(metrics, /^vgw_api_live_list_pages_total\{source="cache"\} 3$/m, 'vgw_api_live_list_pages_total counts the pages served from the cache');
  t.match(metrics, /^vgw_api_live_list_pages_total\{source="database"\} 2$/m, 'and those read');
});

t.test('requests for the same page that arrive together share one read', async (t) => {
  const rig = await startApi(t, '250');
  const call = callRecord(rig.tenantId, rig.nextTime(), { carrier: 'sandbox' });
  await rig.engine.calls.insert(call);
  let release!: () => void;
  rig.hold(new Promise<void>((resolve) => { release = resolve; }));
  const pages = Array.from({ length: 8 }, () => get(rig, rig.sandboxKey));
  await waitFor('all eight requests asked for the page', () => rig.pageCalls() === 8);
  t.equal(rig.reads.length, 1, 'one read under way for the eight of them');
  rig.hold(undefined);
  release();
  for (const page of await Promise.all(pages)) t.same(ids(page), [call.id]);
  t.equal(rig.reads.length, 1, 'and none after it');
});

t.test("a tenant's own command through the api process drops its pages; another tenant's stay", async (t) => {
  const rig = await startApi(t, '250');
  await fakeEngine(t, rig.engine, rig.nextTime);
  const other = await rig.engine.tenants.create('other');
  const otherKey = (await rig.engine.apiKeys.create(other.id, 'sandbox')).apiKey;
  await rig.engine.calls.insert(callRecord(other.id, rig.nextTime(), { carrier: 'sandbox' }));
  const readsOf = (tenantId: string): number => rig.reads.filter((r) => r.tenantId === tenantId).length;

  t.same(ids(await get(rig, rig.sandboxKey)), [], 'no call yet (and the empty page is held)');
  t.equal((await get(rig, otherKey)).data.length, 1);
  const placed = await fetch(`${rig.base}/v1/calls`, {
    method: 'POST', headers: { authorization: `Bearer ${rig.sandboxKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ from: '+15550100', to: '+15550199', carrier: 'sandbox', agent_ws_url: 'ws://127.0.0.1:9/agent' }),
  });
  const call = await placed.json() as { id: string };
  t.equal(placed.status, 200, JSON.stringify(call));
  t.same(ids(await get(rig, rig.sandboxKey)), [call.id], 'the placed call is listed at once, within the fresh-for time');
  t.equal(readsOf(rig.tenantId), 2, 'read again after the placement');

  const command = async (name: string): Promise<void> => {
    const res = await fetch(`${rig.base}/v1/calls/${call.id}/${name}`, { method: 'POST', headers: { authorization: `Bearer ${rig.sandboxKey}` } });
    t.equal(res.status, 200, `${name}: ${await res.text()}`);
  };
  await command('hold');
  t.equal((await get(rig, rig.sandboxKey)).data[0]?.on_hold, true, 'a hold shows at once');
  await command('hangup');
  t.same(ids(await get(rig, rig.sandboxKey)), [], 'so does a hang-up, once the engine wrote the end');
  t.equal(readsOf(rig.tenantId), 4, 'one read after each command');

  t.equal((await get(rig, otherKey)).data.length, 1);
  t.equal(readsOf(other.id), 1, "the other tenant's page was kept through them all");
});

t.test('a read under way when a command is answered is not kept for the requests after it', async (t) => {
  const rig = await startApi(t, '250');
  await fakeEngine(t, rig.engine, rig.nextTime);
  const call = callRecord(rig.tenantId, rig.nextTime(), { carrier: 'sandbox' });
  await rig.engine.calls.insert(call);
  await rig.engine.calls.insert(callRecord(rig.tenantId, rig.nextTime(), { carrier: 'sandbox' }));
  let release!: () => void;
  rig.hold(new Promise<void>((resolve) => { release = resolve; }));
  const before = get(rig, rig.sandboxKey);
  await waitFor('the read is under way', () => rig.reads.length === 1);
  rig.hold(undefined);
  const held = await fetch(`${rig.base}/v1/calls/${call.id}/hold`, { method: 'POST', headers: { authorization: `Bearer ${rig.sandboxKey}` } });
  t.equal(held.status, 200);
  release();
  await before;
  t.equal((await get(rig, rig.sandboxKey)).data.find((c) => c.id === call.id)?.on_hold, true, 'the request after the hold reads the store');
  t.equal(rig.reads.length, 2);
});

t.test('pages never cross tenants or key scopes; each request shape is its own page', async (t) => {
  const rig = await startApi(t, '250');
  const liveKey = (await rig.engine.apiKeys.create(rig.tenantId, 'live')).apiKey;
  const secondSandboxKey = (await rig.engine.apiKeys.create(rig.tenantId, 'sandbox')).apiKey;
  const other = await rig.engine.tenants.create('other');
  const otherKey = (await rig.engine.apiKeys.create(other.id, 'sandbox')).apiKey;
  const sandboxCalls = [callRecord(rig.tenantId, rig.nextTime(), { carrier: 'sandbox' }), callRecord(rig.tenantId, rig.nextTime(), { carrier: 'sandbox', direction: 'inbound' })];
  const liveCall = callRecord(rig.tenantId, rig.nextTime(), { carrier: 'telnyx' });
  const otherCall = callRecord(other.id, rig.nextTime(), { carrier: 'sandbox' });
  for (const call of [...sandboxCalls, liveCall, otherCall]) await rig.engine.calls.insert(call);
  const sandboxIds = sandboxCalls.map((c) => c.id).reverse();

  for (let round = 0; round < 2; round++) {
    t.same(ids(await get(rig, rig.sandboxKey)), sandboxIds, `round ${round}: the sandbox key, the tenant's sandbox calls`);
    t.same(ids(await get(rig, liveKey)), [liveCall.id], `round ${round}: the live key, its live call`);
    t.same(ids(await get(rig, otherKey)), [otherCall.id], `round ${round}: the other tenant, its own`);
  }
  t.equal(rig.reads.length, 3, 'one page each, held for the second round');
  t.same(ids(await get(rig, secondSandboxKey)), sandboxIds, 'another sandbox key of the tenant');
  t.equal(rig.reads.length, 3, 'shares the tenant\'s sandbox page');

  const firstOfOne = await get(rig, rig.sandboxKey, '/v1/calls?limit=1');
  t.same(ids(firstOfOne), [sandboxIds[0]]);
  t.same(ids(await get(rig, rig.sandboxKey, `/v1/calls?limit=1&cursor=${firstOfOne.next_cursor!}`)), [sandboxIds[1]]);
  t.same(ids(await get(rig, rig.sandboxKey, '/v1/calls?direction=inbound')), [sandboxCalls[1]!.id]);
  t.equal(rig.reads.length, 6, 'a limit, a cursor and a direction are pages of their own');
});

t.test('state=ended, the history and a live state always read the store', async (t) => {
  const rig = await startApi(t, '250');
  await rig.engine.calls.insert(callRecord(rig.tenantId, rig.nextTime(), { carrier: 'sandbox' }));
  for (const path of ['/v1/calls?state=ended', '/v1/calls?state=ended&number=%2B15550199', '/v1/calls?state=active']) {
    await get(rig, rig.sandboxKey, path);
    await get(rig, rig.sandboxKey, path);
  }
  t.same(rig.reads.map((r) => r.state), ['ended', 'ended', 'ended', 'ended', 'active', 'active'], 'every request read');
  t.equal(rig.pageCalls(), 0, 'none went through the cache');
});

t.test('api.live_list_cache_ms 0 reads the store on every request', async (t) => {
  const rig = await startApi(t, '0');
  t.same(ids(await get(rig, rig.sandboxKey)), []);
  const call = callRecord(rig.tenantId, rig.nextTime(), { carrier: 'sandbox' });
  await rig.engine.calls.insert(call);
  t.same(ids(await get(rig, rig.sandboxKey)), [call.id], 'the engine\'s new call at once');
  t.equal(rig.reads.length, 2);
  t.equal(rig.pageCalls(), 0);
});
