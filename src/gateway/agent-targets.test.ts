/** @module The SIP target of sip_trunk agents at call time: Retell's per-call registration, stored credentials, platform headers. */
import t from 'tap';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { FakeClock } from '../common/clock.js';
import { silentLogger } from '../common/logger.js';
import { OutboundAddressPolicy } from '../common/outbound-policy.js';
import { SecretBox } from '../common/secret-box.js';
import { createProviderRegistry } from '../providers/index.js';
import { openStore } from '../storage/index.js';
import { createSipTrunkResolver, type AgentTargetOptions } from './agent-targets.js';

const CALL = { callId: 'call_1', callControlId: 'v1:x', from: '+15557770001', to: '+15550100', direction: 'inbound' as const };

async function fakeRetell(t: { teardown(fn: () => void): void }, answer: { status: number; body: unknown }): Promise<{ url: string; seen: { path: string; auth: string; body: Record<string, unknown> }[] }> {
  const seen: { path: string; auth: string; body: Record<string, unknown> }[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    let text = '';
    req.on('data', (c: Buffer) => { text += c.toString(); });
    req.on('end', () => {
      seen.push({ path: `${req.method} ${req.url}`, auth: req.headers.authorization ?? '', body: JSON.parse(text || '{}') as Record<string, unknown> });
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

async function setUp(apiBaseUrl: string, sipTrunkEncryption?: AgentTargetOptions['sipTrunkEncryption']) {
  const clock = new FakeClock();
  const store = await openStore(':memory:', clock, { idleMs: 60_000, absoluteMs: 3_600_000 }, new SecretBox(randomBytes(32)));
  const platforms = createProviderRegistry({ retell: { api_base_url: apiBaseUrl, sip_host: 'sip.retell.test' } }, { clock });
  const resolve = createSipTrunkResolver({
    store, platforms, clock, logger: silentLogger(), connectTimeoutMs: 2000, agentUrls: new OutboundAddressPolicy({ allowPrivate: false }), ...(sipTrunkEncryption ? { sipTrunkEncryption } : {}),
  });
  const tenant = await store.tenants.create('acme');
  const settings = { name: null, connection_mode: 'sip_trunk' as const, region: 'default', sip_credential_id: null, sip_uri: null, sip_transport: null, sip_region: null, websocket_url: null };
  return { store, resolve, tenant, settings };
}

t.test('Retell custom telephony: the call is registered with the stored key, then dialled as sip:{call_id}@edge', async (t) => {
  const retell = await fakeRetell(t, { status: 201, body: { call_id: 'Jabr9TXYYJHfvl6Syypi88rdAHYHmcq6' } });
  const { store, resolve, tenant, settings } = await setUp(retell.url);
  const agent = await store.agents.insert(tenant.id, { provider: 'retell', external_agent_id: 'agent_rt_1', settings, apiKey: 'key_retell_secret', verifiedAt: null });
  const target = await resolve({ tenantId: tenant.id, agentId: agent.id, call: CALL });
  t.same(target, { uri: 'sip:Jabr9TXYYJHfvl6Syypi88rdAHYHmcq6@sip.retell.test;transport=tcp', provider: 'retell', headers: [['X-Call-Id', 'call_1']] });
  t.equal(retell.seen[0]?.path, 'POST /v2/register-phone-call');
  t.equal(retell.seen[0]?.auth, 'Bearer key_retell_secret', 'with the tenant\'s stored key');
  t.same(retell.seen[0]?.body, { agent_id: 'agent_rt_1', from_number: '+15557770001', to_number: '+15550100', direction: 'inbound' });
});

t.test('Retell custom telephony, outbound (docs/API.md "Outbound calls to imported agents"): the registration says direction outbound', async (t) => {
  const retell = await fakeRetell(t, { status: 201, body: { call_id: 'Kbcs0UYZZKgwm7Tzzqj99seBIZIpnd7r' } });
  const { store, resolve, tenant, settings } = await setUp(retell.url);
  const agent = await store.agents.insert(tenant.id, { provider: 'retell', external_agent_id: 'agent_rt_2', settings, apiKey: 'key_retell_secret', verifiedAt: null });
  const target = await resolve({ tenantId: tenant.id, agentId: agent.id, call: { ...CALL, from: '+15550100', to: '+15557770001', direction: 'outbound' } });
  t.match(target, { uri: 'sip:Kbcs0UYZZKgwm7Tzzqj99seBIZIpnd7r@sip.retell.test;transport=tcp' });
  t.same(retell.seen[0]?.body, { agent_id: 'agent_rt_2', from_number: '+15550100', to_number: '+15557770001', direction: 'outbound' });
});

t.test('Retell refusing the registration is a value, without the key in it', async (t) => {
  const retell = await fakeRetell(t, { status: 401, body: { error: 'bad key' } });
  const { store, resolve, tenant, settings } = await setUp(retell.url);
  const agent = await store.agents.insert(tenant.id, { provider: 'retell', external_agent_id: 'agent_rt_1', settings, apiKey: 'key_retell_secret', verifiedAt: null });
  const target = await resolve({ tenantId: tenant.id, agentId: agent.id, call: CALL });
  t.ok('error' in target && /401/.test(target.error) && !target.error.includes('key_retell_secret'), JSON.stringify(target));
});

t.test('RFC 3261 22.2: a stored SIP credential goes with the target; a sip_uri wins over the platform default', async (t) => {
  const { store, resolve, tenant, settings } = await setUp('http://127.0.0.1:9');
  const credential = await store.sipCredentials.create(tenant.id, { username: 'trunk-user', password: 'pw-1', realm: 'edge.example' });
  const agent = await store.agents.insert(tenant.id, {
    provider: 'elevenlabs', external_agent_id: 'agent_el_1', apiKey: null, verifiedAt: null,
    settings: { ...settings, sip_uri: 'sip:+15550100@sip.rtc.elevenlabs.io:5061;transport=tls', sip_credential_id: credential.id },
  });
  const target = await resolve({ tenantId: tenant.id, agentId: agent.id, call: CALL });
  t.same(target, {
    uri: 'sip:+15550100@sip.rtc.elevenlabs.io:5061;transport=tls',
    provider: 'elevenlabs',
    headers: [['X-CALL-ID', 'call_1'], ['X-CALLER-ID', '+15557770001']],
    credentials: { username: 'trunk-user', password: 'pw-1', realm: 'edge.example' },
  });
});

t.test('RFC 4568: the operator\'s providers.<name>.media_encryption goes with that provider\'s targets only', async (t) => {
  const { store, resolve, tenant, settings } = await setUp('http://127.0.0.1:9', { elevenlabs: 'required', vapi: 'disabled' });
  const agentOf = (provider: string, uri: string) => store.agents.insert(tenant.id, {
    provider, external_agent_id: `agent_${provider}`, apiKey: null, verifiedAt: null, settings: { ...settings, sip_uri: uri },
  });
  const encryptionOf = async (provider: string): Promise<unknown> => {
    const target = await resolve({ tenantId: tenant.id, agentId: (await agentOf(provider, `sip:+15550100@${provider}.example;transport=tls`)).id, call: CALL });
    return 'error' in target ? target.error : target.mediaEncryption;
  };
  t.equal(await encryptionOf('elevenlabs'), 'required');
  t.equal(await encryptionOf('vapi'), undefined, 'disabled is plain RTP');
  t.equal(await encryptionOf('custom'), undefined, 'a provider not named is plain RTP');
});
