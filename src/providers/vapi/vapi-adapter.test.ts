import t from 'tap';
import { startFakeProvider } from '../../../test/support/fake-providers/fake-provider.js';
import { providerContract } from '../provider-contract.js';
import { createProviderRegistry } from '../registry.js';

const adapter = createProviderRegistry().get('vapi')!;

t.test('verify contract', (t) => providerContract(t, {
  provider: 'vapi',
  startFake: (options) => startFakeProvider('vapi', options),
  authHeader: 'authorization',
  authValue: (key) => `Bearer ${key}`,
  agentId: '5f1c3a9e-8b2d-4c6f-9a1e-7d3b5c8e2f40',
}));

t.test('docs/API.md "Agents, routes, numbers and SIP credentials": Vapi regions us and eu pick the API and the SIP edge', (t) => {
  t.same(adapter.regions, ['us', 'eu']);
  t.equal(adapter.defaultRegion, 'us');
  t.same(adapter.endpoints('us'), { apiBaseUrl: 'https://api.vapi.ai', sipHost: 'sip.vapi.ai' });
  t.same(adapter.endpoints('eu'), { apiBaseUrl: 'https://api.eu.vapi.ai', sipHost: 'sip.eu.vapi.ai' });
  t.end();
});

t.test('docs/API.md "Agents, routes, numbers and SIP credentials": Vapi offers both modes; SIP numbers on the regional edge', (t) => {
  t.same(adapter.connectionModes, ['sip_trunk', 'media_bridge']);
  t.equal(adapter.defaultSipTransport, 'udp');
  t.equal(adapter.defaultSipUri('us', { didNumber: '+15551234567', externalAgentId: 'a' }), 'sip:+15551234567@sip.vapi.ai;transport=udp');
  t.equal(adapter.defaultSipUri('eu', { didNumber: '+4930123456', externalAgentId: 'a', transport: 'tcp' }), 'sip:+4930123456@sip.eu.vapi.ai;transport=tcp');
  t.equal(adapter.defaultSipUri('us', { externalAgentId: 'a' }), null);
  t.end();
});

t.test('docs/API.md "Agents, routes, numbers and SIP credentials": the Vapi streaming endpoint is the per-call creation URL of the region', (t) => {
  t.equal(adapter.defaultStreamingUrl('us', 'x'), 'https://api.vapi.ai/call');
  t.equal(adapter.defaultStreamingUrl('eu', 'x'), 'https://api.eu.vapi.ai/call');
  t.end();
});

t.test('Vapi: the key goes to /assistant/{id}; a key the account does not hold is bad_credentials', async (t) => {
  const us = await startFakeProvider('vapi', { agents: {}, apiKey: 'us-key-000000000000' });
  t.teardown(() => us.close());
  const vapi = createProviderRegistry({ vapi: { api_base_url: us.url } }).get('vapi')!;
  t.same(await vapi.verify({ externalAgentId: 'a1', apiKey: 'eu-key-000000000000', region: 'eu' }), { outcome: 'bad_credentials' });
  t.equal(us.requests[0]?.path, '/assistant/a1');
});
