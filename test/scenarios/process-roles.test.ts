/**
 * docs/ARCHITECTURE.md "Process roles": an `api` process and an `engine` process over one data
 * folder serve the whole call API. A sandbox call placed through the API process rings on the
 * engine, is listed, held, unheld and hung up through the API process, and its recording is
 * downloaded from it; the API process binds no SIP or RTP socket; the engine's internal endpoint
 * refuses a wrong secret (401) and its public port serves only health and metrics. And recovery
 * at an engine's start ends only its own node's unfinished calls.
 */
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { FakeClock } from '../../src/common/clock.js';
import { createLogger } from '../../src/common/logger.js';
import { SecretBox } from '../../src/common/secret-box.js';
import { recoverUnfinishedCalls } from '../../src/engine/calls/index.js';
import { CdrJournal, DurableCallStore, openStore } from '../../src/storage/index.js';
import { callRecord } from '../support/call-records.js';
import { FakeCustomAgent } from '../support/fake-agent-servers/custom-agent-server.js';
import { waitFor } from '../support/gateway-harness.js';
import { startGatewayProcess, writeGatewayConfig } from '../support/gateway-process.js';

t.setTimeout(480_000);

const SECRET = randomBytes(24).toString('hex');

interface CallView { id: string; state: string; on_hold: boolean; end_reason: string | null; recording: { available: boolean }; session: unknown }

async function api(base: string, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: CallView & { data?: CallView[]; code?: string } }> {
  const res = await fetch(`${base}${path}`, {
    method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as CallView & { data?: CallView[]; code?: string } };
}

/** The ports a process listens on (TCP) or has bound (UDP), from its socket descriptors and /proc/net. */
function socketsOf(pid: number): { tcpListening: number[]; udp: number[] } {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch { /* closed meanwhile */ }
  }
  const ports = (file: string, listeningOnly: boolean): number[] => readFileSync(file, 'utf8').split('\n').slice(1).filter(Boolean).flatMap((line) => {
    const cols = line.trim().split(/\s+/);
    if (!inodes.has(cols[9]!) || (listeningOnly && cols[3] !== '0A')) return [];
    return [parseInt(cols[1]!.split(':')[1]!, 16)];
  });
  return {
    tcpListening: [...ports('/proc/net/tcp', true), ...ports('/proc/net/tcp6', true)],
    udp: [...ports('/proc/net/udp', false), ...ports('/proc/net/udp6', false)],
  };
}

t.test('Process roles: an api process and an engine process over one data folder serve the whole call API', async (t) => {
  const dir = t.testdir({});
  const { configFile, dataDir } = writeGatewayConfig(dir, ['internal:\n  port: 0']);
  const bot = await FakeCustomAgent.start();
  t.teardown(() => bot.core.close());

  const common = { VGW_CONFIG: configFile, VGW_CLUSTER_SECRET: SECRET };
  const engine = await startGatewayProcess(t, { ...common, VGW_ROLE: 'engine', VGW_NODE_ID: 'engine-a' }, /"port":(\d+),.*"msg":"engine listening"/);
  const internalPort = Number(/"internal_port":(\d+)/.exec(engine.output())?.[1]);
  const apiProcess = await startGatewayProcess(t, { ...common, VGW_ROLE: 'api' });
  const key = /sandbox key: (vgw_test_[0-9A-Za-z]+)/.exec(apiProcess.output())?.[1];
  if (!key) return t.fail(`no sandbox key printed:\n${apiProcess.output()}`);

  // The API process owns no SIP or RTP socket: its only listener is the control API.
  const sockets = socketsOf(apiProcess.child.pid!);
  t.same(sockets.udp, [], 'no UDP socket (SIP, RTP) in the api process');
  t.same(sockets.tcpListening, [apiProcess.port], 'its one TCP listener is the control API');
  t.notMatch(apiProcess.output(), /SIP and media listening/);
  t.match(engine.output(), /SIP and media listening/);

  const placed = await api(apiProcess.base, key, 'POST', '/v1/calls', {
    from: '+15550100', to: '+15550199', carrier: 'sandbox', agent_ws_url: bot.url, record: true,
    sip_headers: { 'X-Campaign': 'spring-42' }, custom_parameters: { customer_tier: 'gold' },
  });
  t.equal(placed.status, 200, JSON.stringify(placed.body));
  const id = placed.body.id;
  await waitFor('the call rings on the engine, then is answered', async () => (await api(apiProcess.base, key, 'GET', `/v1/calls/${id}`)).body.state === 'active', 20_000);
  const db = new Database(join(dataDir, 'gateway.db'), { readonly: true });
  t.teardown(() => db.close());
  t.equal(db.prepare('SELECT node_id FROM calls WHERE id = ?').pluck().get(id), 'engine-a', 'the call row names the engine that owns it');
  const listed = await api(apiProcess.base, key, 'GET', '/v1/calls');
  t.same(listed.body.data?.map((c) => c.id), [id], 'the live list of the api process shows the call the engine carries');
  t.ok((await api(apiProcess.base, key, 'GET', `/v1/calls/${id}`)).body.session, 'the detail carries the live session, asked of the engine');
  await bot.core.until(() => bot.receivedAudio().length >= 8000);
  const start = bot.core.jsonMessages().find((m) => m.event === 'start') as { start: { customParameters: Record<string, unknown> } };
  t.equal(start.start.customParameters.customer_tier, 'gold', 'custom_parameters cross the internal endpoint to the engine (docs/API.md "SIP headers carried through")');

  const held = await api(apiProcess.base, key, 'POST', `/v1/calls/${id}/hold`);
  t.equal(held.status, 200, JSON.stringify(held.body));
  t.equal(held.body.on_hold, true, 'held through the api process');
  const unheld = await api(apiProcess.base, key, 'POST', `/v1/calls/${id}/unhold`);
  t.equal(unheld.body.on_hold, false, 'unheld');
  const hung = await api(apiProcess.base, key, 'POST', `/v1/calls/${id}/hangup`);
  t.equal(hung.status, 200, JSON.stringify(hung.body));
  t.equal(hung.body.state, 'ended', 'hung up');
  // docs/ARCHITECTURE.md "Process roles": the list follows once the engine wrote the final record.
  await waitFor('no longer live', async () => ((await api(apiProcess.base, key, 'GET', '/v1/calls')).body.data?.length === 0 ? true : undefined));
  t.pass('no longer live');
  t.equal((await api(apiProcess.base, key, 'GET', `/v1/calls/${id}`)).body.recording.available, true);
  t.match(db.prepare('SELECT recording_path FROM calls WHERE id = ?').pluck().get(id), /^ten_\w+\/call_\w+\.wav$/, 'stored relative to the recordings folder');

  const rec = await fetch(`${apiProcess.base}/v1/calls/${id}/recording`, { headers: { authorization: `Bearer ${key}` } });
  t.equal(rec.status, 200, 'the recording the engine wrote is served by the api process');
  t.equal(rec.headers.get('content-type'), 'audio/wav');
  const wav = Buffer.from(await rec.arrayBuffer());
  t.equal(wav.toString('latin1', 0, 4), 'RIFF');
  t.ok(wav.length > 44 + 8000, `it holds audio (${wav.length} bytes)`);
  t.equal((await api(apiProcess.base, key, 'POST', `/v1/calls/${id}/hold`)).body.code, 'call_not_active', "the engine's own answer comes back as the API's");

  // The engine's public port: health and metrics, nothing of the tenant API.
  for (const path of ['/healthz', '/readyz', '/metrics']) t.equal((await fetch(`${engine.base}${path}`)).status, 200, `engine ${path}`);
  t.equal((await fetch(`${engine.base}/v1/calls`, { headers: { authorization: `Bearer ${key}` } })).status, 404, 'no call API on the engine');
  t.equal((await fetch(`${engine.base}/v1/openapi.json`)).status, 404);

  // The internal endpoint: the shared secret or nothing.
  const internal = (auth: string | undefined) => fetch(`http://127.0.0.1:${internalPort}/internal/v1/carrierNames`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...(auth ? { authorization: auth } : {}) }, body: '{}',
  });
  t.equal((await internal(`Bearer ${SECRET}x`)).status, 401, 'a wrong secret is refused');
  t.equal((await internal(`Bearer ${SECRET.slice(0, -1)}`)).status, 401, 'a prefix of the secret is refused');
  t.equal((await internal(undefined)).status, 401, 'no secret is refused');
  const ok = await internal(`Bearer ${SECRET}`);
  t.equal(ok.status, 200);
  t.match(await ok.json(), { result: ['sandbox'] });
  const post = (path: string, body: string) => fetch(`http://127.0.0.1:${internalPort}${path}`, { method: 'POST', headers: { authorization: `Bearer ${SECRET}` }, body });
  t.equal((await post('/internal/v1/hold', '{"tenantId":')).status, 400, 'a body that is not JSON is a 400');
  t.equal((await post('/internal/v1/hold', '{"tenantId":"ten_x"}')).status, 400, 'missing arguments are a 400');
  t.equal((await post('/internal/v1/reboot', '{}')).status, 404, 'an unknown command is a 404');
  t.equal((await fetch(`${engine.base}/healthz`)).status, 200, 'and the engine is still up');
  t.notMatch(engine.output() + apiProcess.output(), SECRET, 'the secret is never logged');

  // With the engine gone, a command is 503 unavailable, not a hang or a 500.
  engine.child.kill('SIGKILL');
  await new Promise((resolve) => engine.child.once('exit', resolve));
  const refused = await api(apiProcess.base, key, 'POST', '/v1/calls', { from: '+15550100', to: '+15550199', carrier: 'sandbox', agent_ws_url: bot.url });
  t.equal(refused.status, 503);
  t.equal(refused.body.code, 'unavailable');
});

t.test('Process roles: recovery at an engine start ends its own unfinished calls (and those naming no node), never another node\'s', async (t) => {
  const dir = t.testdir({});
  const dataDir = join(dir, 'data');
  const clock = new FakeClock(Date.parse('2026-01-01T12:00:00.000Z'));
  const policy = { idleMs: 60_000, absoluteMs: 3_600_000 };
  const secrets = new SecretBox(randomBytes(32));
  const file = join(dir, 'gateway.db');
  const nodeA = await openStore(file, clock, policy, secrets, { nodeId: 'node-a' });
  const nodeB = await openStore(file, clock, policy, secrets, { nodeId: 'node-b' });
  const before = await openStore(file, clock, policy, secrets);
  t.teardown(async () => { await nodeA.close(); await nodeB.close(); await before.close(); });
  const tenant = await nodeA.tenants.create('acme');
  const ofA = callRecord(tenant.id, '2026-01-01T11:00:00.000Z');
  const ofB = callRecord(tenant.id, '2026-01-01T11:00:00.000Z');
  const ofNone = callRecord(tenant.id, '2026-01-01T11:00:00.000Z');
  await nodeA.calls.insert(ofA);
  await nodeB.calls.insert(ofB);
  await before.calls.insert(ofNone);
  t.equal(await nodeA.calls.ownerOf(tenant.id, ofB.id), 'node-b', 'each row names its node');
  t.equal(await nodeA.calls.ownerOf(tenant.id, ofNone.id), null);

  const logger = createLogger({ level: 'silent' });
  const store = new DurableCallStore({
    calls: nodeA.calls, transcripts: nodeA.transcripts, transaction: (fn) => nodeA.transaction(fn), journal: new CdrJournal(dataDir), clock, logger, retryMs: 1000,
  });
  t.equal(await recoverUnfinishedCalls(store, dataDir, clock, logger, { nodeId: 'node-a' }), 2);
  await store.settled();
  t.match(await nodeA.calls.get(tenant.id, ofA.id), { state: 'ended', end_reason: 'gateway_restart' }, "node A's call is ended");
  t.match(await nodeA.calls.get(tenant.id, ofNone.id), { state: 'ended', end_reason: 'gateway_restart' }, 'a row from before node ids is its own');
  t.match(await nodeA.calls.get(tenant.id, ofB.id), { state: 'active', end_reason: null }, "node B's live call is left alone");
});
