/**
 * @module docs/SECURITY.md "Outbound addresses" at connect time: a media_bridge agent's stored
 * `websocket_url` is resolved and every answer checked when the call connects, and the socket is
 * pinned to the checked address. A real WebSocket server on 127.0.0.1 counts the connections.
 */
import t from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { WebSocketServer } from 'ws';
import { FakeClock } from '../common/clock.js';
import { silentLogger } from '../common/logger.js';
import { checkedLookup, OutboundAddressPolicy, type HostResolver } from '../common/outbound-policy.js';
import { SecretBox } from '../common/secret-box.js';
import { createProviderRegistry, ProviderError } from '../providers/index.js';
import { openCustomAgentSession } from '../providers/custom/custom-agent-session.js';
import { openStore } from '../storage/index.js';
import { openImportedAgent } from './agent-targets.js';

const CALL = { callId: 'call_1', callControlId: 'v1:x', from: '+15557770001', to: '+15550100', direction: 'inbound' as const };

/** A WebSocket agent on 127.0.0.1: every TCP connection and every JSON event it receives. */
async function agentServer(t: { teardown(fn: () => void): void }): Promise<{ port: number; connections: () => number; events: string[] }> {
  const server = createServer();
  let connections = 0;
  server.on('connection', () => { connections++; });
  const events: string[] = [];
  const wss = new WebSocketServer({ server });
  wss.on('connection', (socket) => socket.on('message', (data: Buffer) => events.push(String((JSON.parse(data.toString('utf8')) as { event?: unknown }).event))));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const client of wss.clients) client.terminate();
    wss.close();
    server.close();
  });
  return { port: (server.address() as AddressInfo).port, connections: () => connections, events };
}

/** A media_bridge `custom` agent stored with `url` (as if it passed the import check then), opened under `policy`. */
async function openAgent(url: string, policy: OutboundAddressPolicy, resolve: HostResolver) {
  const clock = new FakeClock();
  const store = await openStore(':memory:', clock, { idleMs: 60_000, absoluteMs: 3_600_000 }, new SecretBox(randomBytes(32)));
  const tenant = await store.tenants.create('acme');
  const agent = await store.agents.insert(tenant.id, {
    provider: 'custom', external_agent_id: 'bot', apiKey: null, verifiedAt: null,
    settings: { name: null, connection_mode: 'media_bridge', region: 'default', sip_credential_id: null, sip_uri: null, sip_transport: null, sip_region: null, websocket_url: url },
  });
  const options = {
    store, platforms: createProviderRegistry({}, { clock }), clock: new FakeClock(), logger: silentLogger(),
    connectTimeoutMs: 2000, agentUrls: policy, resolve,
  };
  return openImportedAgent(options, { tenantId: tenant.id, agentId: agent.id, call: CALL, handlers: {} });
}

const answers = (table: Record<string, string[]>, asked: string[] = []): HostResolver => (host) => {
  asked.push(host);
  const found = table[host];
  return found ? Promise.resolve(found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))) : Promise.reject(Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' }));
};

const denyPrivate = new OutboundAddressPolicy({ allowPrivate: false });

async function refusal(link: { start(): Promise<void> }): Promise<unknown> {
  return link.start().then(() => 'started', (err: unknown) => err);
}

t.test('Outbound addresses: a name that passed at import but resolves to loopback now is refused at connect; no start is sent', async (t) => {
  const agent = await agentServer(t);
  const link = await openAgent(`ws://agent.example.test:${agent.port}/agent`, denyPrivate, answers({ 'agent.example.test': ['127.0.0.1'] }));
  const err = await refusal(link);
  t.ok(err instanceof ProviderError && err.kind === 'rejected', `refused: ${String(err)}`);
  await new Promise((resolve) => setTimeout(resolve, 200));
  t.equal(agent.connections(), 0, 'the agent server received no connection');
  t.same(agent.events, [], 'and no start message');
});

t.test('Outbound addresses: one non-public answer among public ones refuses the name at connect', async (t) => {
  const agent = await agentServer(t);
  const link = await openAgent(`ws://mixed.example.test:${agent.port}/agent`, denyPrivate, answers({ 'mixed.example.test': ['93.184.215.14', '127.0.0.1'] }));
  const err = await refusal(link);
  t.ok(err instanceof ProviderError && err.kind === 'rejected', String(err));
  t.equal(agent.connections(), 0);
});

t.test('Outbound addresses: localhost and literal loopback URLs stored earlier are refused at connect', async (t) => {
  const agent = await agentServer(t);
  for (const host of ['localhost', '127.0.0.1', '[::ffff:127.0.0.1]']) {
    const err = await refusal(await openAgent(`ws://${host}:${agent.port}/agent`, denyPrivate, answers({})));
    t.ok(err instanceof ProviderError && err.kind === 'rejected', `${host}: ${String(err)}`);
  }
  await new Promise((resolve) => setTimeout(resolve, 200));
  t.equal(agent.connections(), 0, 'none of them connected');
  t.same(agent.events, []);
});

t.test('Outbound addresses: an allowed network connects, pinned to the address that was checked', async (t) => {
  const agent = await agentServer(t);
  const asked: string[] = [];
  // The name exists only in this resolver: the socket can reach the server only through the pinned answer.
  const allowLoopback = new OutboundAddressPolicy({ allowPrivate: false, allowedPrivateNetworks: ['127.0.0.0/8'] });
  const link = await openAgent(`ws://agent.example.test:${agent.port}/agent`, allowLoopback, answers({ 'agent.example.test': ['127.0.0.1'] }, asked));
  await link.start();
  t.teardown(() => link.close('test over'));
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.equal(agent.connections(), 1);
  t.ok(agent.events.includes('start'), 'the start message arrived');
  t.same(asked, ['agent.example.test'], 'resolved once: the socket used the checked answer, not a second lookup');
});

t.test('Outbound addresses: a literal address a session opens (a platform\'s signed URL) goes through the checked lookup too', async (t) => {
  const agent = await agentServer(t);
  // Sockets skip `lookup` for literal addresses; the session must ask it anyway.
  const session = openCustomAgentSession({
    call: CALL, endpoint: { url: `ws://127.0.0.1:${agent.port}/agent`, externalAgentId: '' }, clock: new FakeClock(), connectTimeoutMs: 2000, handlers: {},
    lookup: checkedLookup(denyPrivate, answers({})),
  });
  const err = await refusal(session);
  t.ok(err instanceof ProviderError && err.kind === 'rejected', String(err));
  await new Promise((resolve) => setTimeout(resolve, 200));
  t.equal(agent.connections(), 0, 'no connection to the literal loopback address');
});
