import t from 'tap';
import { startFakeProvider } from '../../../test/support/fake-providers/fake-provider.js';
import { providerContract } from '../provider-contract.js';
import { createProviderRegistry } from '../registry.js';

const adapter = createProviderRegistry().get('openai')!;

t.test('verify contract', (t) => providerContract(t, {
  provider: 'openai',
  startFake: (options) => startFakeProvider('openai', options),
  authHeader: 'authorization',
  authValue: (key) => `Bearer ${key}`,
  agentId: 'gpt-realtime',
}));

t.test('docs/API.md "Agents, routes, numbers and SIP credentials": OpenAI Realtime bridges to the model socket; SIP needs the project URI', (t) => {
  t.same(adapter.regions, ['default']);
  t.same(adapter.connectionModes, ['sip_trunk', 'media_bridge']);
  t.equal(adapter.defaultSipTransport, 'tls');
  t.equal(adapter.defaultStreamingUrl('default', 'gpt-realtime'), 'wss://api.openai.com/v1/realtime?model=gpt-realtime');
  t.equal(adapter.defaultSipUri('default', { didNumber: '+15551234567', externalAgentId: 'gpt-realtime' }), null);
  t.equal(adapter.endpoints('default').sipHost, 'sip.api.openai.com');
  t.end();
});
