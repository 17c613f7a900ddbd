/**
 * The drain on SIGTERM (docs/RELIABILITY.md, "Drain"): /readyz answers 503 at once while the
 * listener stays open, new calls are refused 503 unavailable, a live call goes on until it ends
 * (then the process exits at once) or until shutdown.drain_seconds passes (then it is ended
 * gateway_shutdown).
 */
import t, { type Test } from 'tap';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { FakeCustomAgent } from '../support/fake-agent-servers/custom-agent-server.js';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.js';

t.setTimeout(300_000);

async function gatewayWithCall(t: Test, drainSeconds: number): Promise<{ gw: GatewayProcess; key: string; callId: string; dataDir: string }> {
  const agent = await FakeCustomAgent.start();
  t.teardown(() => agent.core.close());
  const dataDir = t.testdir({});
  writeFileSync(`${dataDir}/config.yaml`, `shutdown:\n  drain_seconds: ${drainSeconds}\ncalls:\n  allow_private_agent_urls: true\n`);
  const gw = await startGatewayProcess(t, { VGW_CONFIG: `${dataDir}/config.yaml`, VGW_DATA_DIR: dataDir, VGW_HTTP_PORT: '0', VGW_SIP_HOST: '127.0.0.1', VGW_SIP_PORT: '0' });
  const key = /sandbox key: (vgw_test_\w+)/.exec(gw.output())![1]!;
  const placed = await api(gw, key, 'POST', '/v1/calls', { from: '+15550100', to: '+15550199', carrier: 'sandbox', agent_ws_url: agent.url });
  const callId = String(placed.body.id);
  for (let i = 0; i < 200 && (await api(gw, key, 'GET', `/v1/calls/${callId}`)).body.state !== 'active'; i++) await sleep(50);
  return { gw, key, callId, dataDir };
}

async function api(gw: GatewayProcess, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await fetch(`${gw.base}${path}`, { method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  return { status: r.status, body: await r.json() as Record<string, unknown> };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

t.test('SIGTERM: readyz 503 at once, new calls refused, the live call goes on, exit as soon as it ends', async (t) => {
  const { gw, key, callId } = await gatewayWithCall(t, 120);
  t.equal((await fetch(`${gw.base}/readyz`)).status, 200);
  const exited = once(gw.child, 'exit') as Promise<[number | null]>;
  gw.child.kill('SIGTERM');
  await sleep(300);
  const ready = await fetch(`${gw.base}/readyz`);
  t.equal(ready.status, 503, 'the listener is still open and says not ready');
  const refused = await api(gw, key, 'POST', '/v1/calls', { from: '+15550100', to: '+15550198', carrier: 'sandbox', agent_ws_url: 'ws://127.0.0.1:9/agent' });
  t.equal(refused.status, 503);
  t.equal(refused.body.code, 'unavailable', 'new calls are refused while draining');
  await sleep(1000);
  t.equal((await api(gw, key, 'GET', `/v1/calls/${callId}`)).body.state, 'active', 'the live call goes on');
  const hungUpAt = Date.now();
  const hung = await api(gw, key, 'POST', `/v1/calls/${callId}/hangup`);
  t.equal(hung.body.end_reason, 'completed', 'it ends as its parties end it');
  const [code] = await exited;
  t.equal(code, 0);
  // drain_seconds is 120: exiting well before it shows the drain ended with the last call.
  t.ok(Date.now() - hungUpAt < 60_000, 'the process exits once nothing is left, not after the drain time');
});

t.test('SIGTERM: a call still up when shutdown.drain_seconds passes is ended gateway_shutdown', async (t) => {
  const { gw, callId, dataDir } = await gatewayWithCall(t, 2);
  const exited = once(gw.child, 'exit') as Promise<[number | null]>;
  gw.child.kill('SIGTERM');
  const [code] = await exited;
  t.equal(code, 0);
  const db = new Database(`${dataDir}/gateway.db`, { readonly: true });
  t.teardown(() => db.close());
  const row = db.prepare('SELECT state, end_reason FROM calls WHERE id = ?').get(callId) as { state: string; end_reason: string };
  t.same(row, { state: 'ended', end_reason: 'gateway_shutdown' });
});
