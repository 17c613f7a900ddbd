import t from 'tap';
import { startFakeProvider } from '../../../test/support/fake-providers/fake-provider.js';
import { providerContract } from '../provider-contract.js';
import { createProviderRegistry } from '../registry.js';

const adapter = createProviderRegistry().get('retell')!;

t.test('verify contract', (t) => providerContract(t, {
  provider: 'retell',
  startFake: (options) => startFakeProvider('retell', options),
  authHeader: 'authorization',
  authValue: (key) => `Bearer ${key}`,
  agentId: '16b980523634a6dc504898cda492e939',
}));

t.test('docs/API.md "Agents, routes, numbers and SIP credentials": Retell has one region with api.retellai.com and sip.retellai.com', (t) => {
  t.same(adapter.regions, ['default']);
  t.equal(adapter.defaultRegion, 'default');
  t.same(adapter.endpoints('default'), { apiBaseUrl: 'https://api.retellai.com', sipHost: 'sip.retellai.com' });
  t.end();
});

t.test('docs/API.md "Agents, routes, numbers and SIP credentials": Retell offers sip_trunk only (no audio WebSocket), TCP by default', (t) => {
  t.same(adapter.connectionModes, ['sip_trunk']);
  t.notOk(adapter.connectionModes.includes('media_bridge'));
  t.equal(adapter.defaultStreamingUrl('default', 'agent'), null);
  t.equal(adapter.defaultSipTransport, 'tcp');
  t.equal(adapter.defaultSipUri('default', { didNumber: '+15551234567', externalAgentId: 'a' }), 'sip:+15551234567@sip.retellai.com;transport=tcp');
  t.equal(adapter.defaultSipUri('default', { didNumber: '+15551234567', externalAgentId: 'a', transport: 'udp' }), 'sip:+15551234567@sip.retellai.com;transport=udp');
  t.equal(adapter.defaultSipUri('default', { externalAgentId: 'a' }), null);
  t.end();
});

t.test('Retell: the agent name comes from agent_name', async (t) => {
  const fake = await startFakeProvider('retell', { agents: { ag1: 'Sales line' }, apiKey: 'key_retell_1234' });
  t.teardown(() => fake.close());
  const retell = createProviderRegistry({ retell: { api_base_url: fake.url } }).get('retell')!;
  t.same(await retell.verify({ externalAgentId: 'ag1', apiKey: 'key_retell_1234', region: 'default' }), { outcome: 'found', name: 'Sales line' });
  t.equal(fake.requests[0]?.path, '/get-agent/ag1');
});
