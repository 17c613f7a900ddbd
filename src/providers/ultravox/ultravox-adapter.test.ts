import t from 'tap';
import { startFakeProvider } from '../../../test/support/fake-providers/fake-provider.js';
import { providerContract } from '../provider-contract.js';
import { createProviderRegistry } from '../registry.js';

const adapter = createProviderRegistry().get('ultravox')!;

t.test('verify contract', (t) => providerContract(t, {
  provider: 'ultravox',
  startFake: (options) => startFakeProvider('ultravox', options),
  authHeader: 'x-api-key',
  authValue: (key) => key,
  agentId: '0b4d8c2e-1f3a-4e5b-9c6d-7e8f9a0b1c2d',
}));

t.test('docs/API.md "Agents, routes, numbers and SIP credentials": Ultravox offers both modes and has no public SIP edge', (t) => {
  t.same(adapter.regions, ['default']);
  t.same(adapter.connectionModes, ['sip_trunk', 'media_bridge']);
  t.same(adapter.endpoints('default'), { apiBaseUrl: 'https://api.ultravox.ai' });
  t.equal(adapter.defaultSipUri('default', { didNumber: '+15551234567', externalAgentId: 'a' }), null, 'the SIP domain is per account');
  t.equal(adapter.defaultStreamingUrl('default', 'ag-1'), 'https://api.ultravox.ai/api/agents/ag-1/calls');
  t.end();
});
