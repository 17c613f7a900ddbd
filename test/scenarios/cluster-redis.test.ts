/**
 * docs/CLUSTER.md "Live state in Redis": an `api` process and two `engine` processes over one
 * data folder and one redis-server. New calls placed through the API process land on both
 * engines; the API process lists the live calls of both, newest first, with working cursors;
 * a hang-up reaches the call's owner; a tenant's concurrency limit holds across the engines
 * (each engine alone is under it) and frees again when a call ends. A command on the call of a
 * dead engine answers 503 with Retry-After once its lease expires; the engine's restart ends it.
 */
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { FakeCustomAgent } from '../support/fake-agent-servers/custom-agent-server.js';
import { waitFor } from '../support/gateway-harness.js';
import { startGatewayProcess, writeGatewayConfig } from '../support/gateway-process.js';
import { startRedis } from '../support/redis.js';

t.setTimeout(480_000);

const SECRET = randomBytes(24).toString('hex');
const TENANT_LIMIT = 3;

interface CallView { id: string; state: string; created_at: string; code?: string; data?: CallView[]; next_cursor?: string | null; has_more?: boolean }

async function api(base: string, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: CallView; retryAfter: string | null }> {
  const res = await fetch(`${base}${path}`, {
    method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as CallView, retryAfter: res.headers.get('retry-after') };
}

t.test('docs/CLUSTER.md "Live state in Redis": one api and two engine processes share the live calls and the tenant limit through Redis', async (t) => {
  const redis = await startRedis(t);
  if (!redis) return;
  const dir = t.testdir({});
  const { configFile, dataDir } = writeGatewayConfig(dir, ['internal:\n  port: 0']);
  // The tenant limit, which each engine alone would never reach with the calls it gets here.
  writeFileSync(configFile, readFileSync(configFile, 'utf8').replace('calls:\n', `calls:\n  max_concurrent_per_tenant: ${TENANT_LIMIT}\n`));
  const bot = await FakeCustomAgent.start();
  t.teardown(() => bot.core.close());

  const common = { VGW_CONFIG: configFile, VGW_CLUSTER_SECRET: SECRET, VGW_REDIS_URL: redis.url, VGW_NODE_CAPACITY: '20' };
  const engineReady = /"port":(\d+),.*"msg":"engine listening"/;
  const rtpB = 30000 + 2 * Math.floor(Math.random() * 4800);
  const engineA = await startGatewayProcess(t, { ...common, VGW_ROLE: 'engine', VGW_NODE_ID: 'engine-a' }, engineReady);
  // Engine B: its own RTP range (the config's is engine A's), like a second machine.
  const engineB = await startGatewayProcess(t, { ...common, VGW_ROLE: 'engine', VGW_NODE_ID: 'engine-b', VGW_RTP_PORT_MIN: String(rtpB), VGW_RTP_PORT_MAX: String(rtpB + 399) }, engineReady);
  const apiProcess = await startGatewayProcess(t, { ...common, VGW_ROLE: 'api' });
  const key = /sandbox key: (vgw_test_[0-9A-Za-z]+)/.exec(apiProcess.output())?.[1];
  if (!key) return t.fail(`no sandbox key printed:\n${apiProcess.output()}`);
  const call = { from: '+15550100', to: '+15550199', carrier: 'sandbox', agent_ws_url: bot.url };

  const ids: string[] = [];
  for (let i = 0; i < TENANT_LIMIT; i++) {
    const placed = await api(apiProcess.base, key, 'POST', '/v1/calls', call);
    t.equal(placed.status, 200, JSON.stringify(placed.body));
    ids.push(placed.body.id);
  }
  for (const id of ids) {
    await waitFor(`call ${id} is answered`, async () => (await api(apiProcess.base, key, 'GET', `/v1/calls/${id}`)).body.state === 'active', 20_000);
  }
  const db = new Database(join(dataDir, 'gateway.db'), { readonly: true });
  t.teardown(() => db.close());
  const ownerOf = (id: string): unknown => db.prepare('SELECT node_id FROM calls WHERE id = ?').pluck().get(id);
  t.same(new Set(ids.map(ownerOf)), new Set(['engine-a', 'engine-b']), 'the new calls went to both engines');

  const over = await api(apiProcess.base, key, 'POST', '/v1/calls', call);
  t.equal(over.status, 429, 'the call over the tenant limit is refused, though neither engine alone carries as many');
  t.equal(over.body.code, 'concurrency_limit');
  t.ok(Number(over.retryAfter) >= 1, 'with Retry-After');

  const listed = await api(apiProcess.base, key, 'GET', '/v1/calls');
  t.same(listed.body.data?.map((c) => c.id), [...ids].reverse(), 'the api process lists the live calls of both engines, newest first');
  const first = await api(apiProcess.base, key, 'GET', '/v1/calls?limit=2');
  t.same(first.body.data?.map((c) => c.id), [ids[2], ids[1]]);
  t.equal(first.body.has_more, true);
  const rest = await api(apiProcess.base, key, 'GET', `/v1/calls?limit=2&cursor=${first.body.next_cursor}`);
  t.same(rest.body.data?.map((c) => c.id), [ids[0]], 'the cursor goes on where the first page stopped');
  t.equal(rest.body.has_more, false);
  const metrics = await (await fetch(`${apiProcess.base}/metrics`)).text();
  t.match(metrics, /^vgw_api_live_list_pages_total\{source="redis"\} [1-9]\d*$/m, 'the pages it read are counted as read from Redis');
  t.notMatch(metrics, /vgw_api_live_list_pages_total\{source="database"\}/, 'not from a database it did not read them from');

  for (const id of ids.slice(0, TENANT_LIMIT)) {
    const hung = await api(apiProcess.base, key, 'POST', `/v1/calls/${id}/hangup`);
    t.equal(hung.status, 200, `the hang-up reaches ${String(ownerOf(id))}, the call's owner`);
    t.equal(hung.body.state, 'ended');
    if (id === ids[0]) {
      const again = await api(apiProcess.base, key, 'POST', '/v1/calls', call);
      t.equal(again.status, 200, 'an ended call frees its place under the limit');
      ids.push(again.body.id);
      await waitFor('the new call is answered', async () => (await api(apiProcess.base, key, 'GET', `/v1/calls/${again.body.id}`)).body.state === 'active', 20_000);
    }
  }
  t.same((await api(apiProcess.base, key, 'GET', '/v1/calls')).body.data?.map((c) => c.id), [ids[3]], 'ended calls leave the live list');
  t.equal((await api(apiProcess.base, key, 'POST', `/v1/calls/${ids[3]!}/hangup`)).status, 200);
  t.same((await api(apiProcess.base, key, 'GET', '/v1/calls')).body.data, []);

  // An engine dies with a call: once its lease expires, commands on its call answer 503 with
  // Retry-After (no reaper runs in this test, so the call stays so).
  const orphan = await api(apiProcess.base, key, 'POST', '/v1/calls', call);
  t.equal(orphan.status, 200);
  const owner = ownerOf(orphan.body.id) === 'engine-a' ? engineA : engineB;
  owner.child.kill('SIGKILL');
  let answer = await api(apiProcess.base, key, 'POST', `/v1/calls/${orphan.body.id}/hold`);
  await waitFor('the dead engine\'s lease expires', async () => {
    answer = await api(apiProcess.base, key, 'POST', `/v1/calls/${orphan.body.id}/hold`);
    return answer.retryAfter !== null;
  }, 30_000);
  t.equal(answer.status, 503);
  t.equal(answer.body.code, 'unavailable');
  t.equal(answer.retryAfter, '5', 'Retry-After: about one reaper round');

  // The engine comes back under its node id: its recovery ends the call, and Redis frees its place.
  const restarted = await startGatewayProcess(t, {
    ...common, VGW_ROLE: 'engine', VGW_NODE_ID: String(ownerOf(orphan.body.id)),
    ...(owner === engineB ? { VGW_RTP_PORT_MIN: String(rtpB), VGW_RTP_PORT_MAX: String(rtpB + 399) } : {}),
  }, engineReady);
  t.ok(restarted.port);
  t.equal((await api(apiProcess.base, key, 'POST', `/v1/calls/${orphan.body.id}/hold`)).body.code, 'call_not_active', 'the orphaned call has ended');
  t.same((await api(apiProcess.base, key, 'GET', '/v1/calls')).body.data, [], 'and left the live list');
  t.end();
});
