/**
 * docs/ARCHITECTURE.md "Running on PostgreSQL": `VGW_DATABASE_URL=postgres://… npm start` runs the
 * product on PostgreSQL (migrations at start, the sandbox tenant of a first start, calls), never
 * logs the URL's password, and restart recovery ends only the calls of its own node id
 * (docs/ARCHITECTURE.md "Process roles"): an engine with another id sharing the database leaves
 * a crashed engine's call alone; the crashed engine, started again, ends it `gateway_restart`.
 */
import t from 'tap';
import { once } from 'node:events';
import { join } from 'node:path';
import { FakeCustomAgent } from '../support/fake-agent-servers/custom-agent-server.js';
import { waitFor } from '../support/gateway-harness.js';
import { startGatewayProcess, writeGatewayConfig } from '../support/gateway-process.js';
import { testDatabase } from '../support/postgres.js';

const PASSWORD = 'pw-never-logged-7f3a';

async function api(base: string, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${base}${path}`, {
    method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

t.test('the gateway process on PostgreSQL: first start, a sandbox call, and recovery by node id after SIGKILL', { timeout: 360_000 }, async (t) => {
  const database = await testDatabase(t);
  if (database === undefined) return;
  const url = new URL(database);
  url.password = PASSWORD; // trust authentication on the test server: accepted, and must never be printed
  const dir = t.testdir({ a: {}, b: {} });
  const a = writeGatewayConfig(join(dir, 'a'));
  const b = writeGatewayConfig(join(dir, 'b'));
  const envOf = (configFile: string, nodeId: string) => ({ VGW_CONFIG: configFile, VGW_DATABASE_URL: url.toString(), VGW_NODE_ID: nodeId });
  const bot = await FakeCustomAgent.start();
  t.teardown(() => bot.core.close());

  const first = await startGatewayProcess(t, envOf(a.configFile, 'engine-a'));
  const key = /sandbox key: (vgw_test_[0-9A-Za-z]+)/.exec(first.output())?.[1];
  if (!key) return t.fail(`no sandbox key printed on a first start:\n${first.output()}`);
  const placed = await api(first.base, key, 'POST', '/v1/calls', { from: '+15550100', to: '+15550199', carrier: 'sandbox', agent_ws_url: bot.url });
  t.equal(placed.status, 200, JSON.stringify(placed.body));
  const id = String(placed.body.id);
  await waitFor('call active', async () => (await api(first.base, key, 'GET', `/v1/calls/${id}`)).body.state === 'active', 20_000);
  t.comment('engine-a has a live call; killed');
  first.child.kill('SIGKILL');
  await once(first.child, 'exit');

  const other = await startGatewayProcess(t, envOf(b.configFile, 'engine-b'));
  t.notMatch(other.output(), /sandbox key:/, 'the shared database already has its tenant: no second first start');
  t.notMatch(other.output(), /ended calls left unfinished by a restart/, 'engine-b does not end engine-a\'s call');
  t.equal((await api(other.base, key, 'GET', `/v1/calls/${id}`)).body.state, 'active', 'read through engine-b: still engine-a\'s live call');
  other.child.kill('SIGTERM');
  t.equal((await once(other.child, 'exit'))[0], 0, 'engine-b stops cleanly');

  const again = await startGatewayProcess(t, envOf(a.configFile, 'engine-a'));
  t.match(again.output(), /ended calls left unfinished by a restart/, 'engine-a, started again, recovers its own call');
  const ended = await api(again.base, key, 'GET', `/v1/calls/${id}`);
  t.match(ended.body, { state: 'ended', end_reason: 'gateway_restart' });
  const list = await api(again.base, key, 'GET', '/v1/calls?state=ended&limit=10');
  t.ok((list.body.data as { id: string }[]).some((c) => c.id === id), 'listed among ended calls');
  for (const output of [first.output(), other.output(), again.output()]) t.notOk(output.includes(PASSWORD), 'the database password is in no log line');
  again.child.kill('SIGTERM');
  t.equal((await once(again.child, 'exit'))[0], 0, 'stops cleanly');
});
