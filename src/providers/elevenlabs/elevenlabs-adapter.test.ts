import t from 'tap';
import { startFakeProvider } from '../../../test/support/fake-providers/fake-provider.js';
import { providerContract } from '../provider-contract.js';
import { createProviderRegistry } from '../registry.js';

const adapter = createProviderRegistry().get('elevenlabs')!;
const KEY = 'xi_test_9d8c7b6a5f4e3d2c1b0a';

t.test('verify contract', (t) => providerContract(t, {
  provider: 'elevenlabs',
  startFake: (options) => startFakeProvider('elevenlabs', options),
  authHeader: 'xi-api-key',
  authValue: (key) => key,
  agentId: 'agent_01jz8k2m3n4p5q6r7s8t9v0w1x',
}));

t.test('docs/API.md "Agents, routes, numbers and SIP credentials": regions default, us, eu, in, sg pick the API base URL', (t) => {
  t.same(adapter.regions, ['default', 'us', 'eu', 'in', 'sg']);
  t.equal(adapter.defaultRegion, 'default');
  t.same(adapter.endpoints('default'), {
    apiBaseUrl: 'https://api.elevenlabs.io', wsBaseUrl: 'wss://api.elevenlabs.io', sipHost: 'sip.rtc.elevenlabs.io',
  });
  t.equal(adapter.endpoints('us').apiBaseUrl, 'https://api.us.elevenlabs.io');
  t.equal(adapter.endpoints('eu').apiBaseUrl, 'https://api.eu.residency.elevenlabs.io');
  t.equal(adapter.endpoints('in').apiBaseUrl, 'https://api.in.residency.elevenlabs.io');
  t.equal(adapter.endpoints('sg').wsBaseUrl, 'wss://api.sg.residency.elevenlabs.io');
  t.throws(() => adapter.endpoints('mars'), { name: 'InvariantError' });
  t.end();
});

t.test('docs/API.md "Agents, routes, numbers and SIP credentials": both modes, TCP by default, SIP edge sip.rtc.elevenlabs.io', (t) => {
  t.same(adapter.connectionModes, ['sip_trunk', 'media_bridge']);
  t.equal(adapter.defaultSipTransport, 'tcp');
  t.equal(adapter.defaultSipUri('default', { didNumber: '+15551234567', externalAgentId: 'agent_x' }),
    'sip:+15551234567@sip.rtc.elevenlabs.io:5060;transport=tcp');
  t.equal(adapter.defaultSipUri('eu', { didNumber: '+4930123456', externalAgentId: 'agent_x', transport: 'tls' }),
    'sip:+4930123456@sip.rtc.elevenlabs.io:5061;transport=tls');
  t.equal(adapter.defaultSipUri('default', { externalAgentId: 'agent_x' }), null,
    'the edge routes on the number: no default without one');
  t.end();
});

t.test('docs/API.md "Agents, routes, numbers and SIP credentials": the default streaming endpoint is the conversation socket of the region', (t) => {
  t.equal(adapter.defaultStreamingUrl('default', 'agent_01 x'), 'wss://api.elevenlabs.io/v1/convai/conversation?agent_id=agent_01%20x');
  t.equal(adapter.defaultStreamingUrl('in', 'agent_1'), 'wss://api.in.residency.elevenlabs.io/v1/convai/conversation?agent_id=agent_1');
  t.end();
});

t.test('docs/CONFIGURATION.md "Operator surface": providers.elevenlabs overrides replace every region', (t) => {
  const overridden = createProviderRegistry({
    elevenlabs: { api_base_url: 'http://127.0.0.1:9/el/', ws_base_url: 'ws://127.0.0.1:9', sip_host: '127.0.0.1:5099' },
  }).get('elevenlabs')!;
  for (const region of overridden.regions) {
    t.same(overridden.endpoints(region), { apiBaseUrl: 'http://127.0.0.1:9/el', wsBaseUrl: 'ws://127.0.0.1:9', sipHost: '127.0.0.1:5099' });
  }
  t.equal(overridden.defaultSipUri('sg', { didNumber: '+6561234567', externalAgentId: 'a' }), 'sip:+6561234567@127.0.0.1:5099;transport=tcp');
  t.end();
});

t.test('ElevenLabs: detail.status agent_not_found decides whatever the HTTP status', async (t) => {
  const fake = await startFakeProvider('elevenlabs', {
    agents: { agent_1: 'x' }, apiKey: KEY,
    fail: { status: 400, times: 'always', body: { detail: { status: 'agent_not_found', message: 'Agent not found' } } },
  });
  t.teardown(() => fake.close());
  const el = createProviderRegistry({ elevenlabs: { api_base_url: fake.url } }).get('elevenlabs')!;
  t.same(await el.verify({ externalAgentId: 'agent_1', apiKey: KEY, region: 'default' }), { outcome: 'not_found' });
});

t.test('ElevenLabs: a 422 validation error is not taken for a missing agent (the docs give no such meaning)', async (t) => {
  const fake = await startFakeProvider('elevenlabs', {
    agents: { agent_1: 'x' }, apiKey: KEY,
    fail: { status: 422, times: 'always', body: { detail: [{ loc: ['path', 'agent_id'], msg: 'bad', type: 'value_error' }] } },
  });
  t.teardown(() => fake.close());
  const el = createProviderRegistry({ elevenlabs: { api_base_url: fake.url } }).get('elevenlabs')!;
  t.same(await el.verify({ externalAgentId: 'agent_1', apiKey: KEY, region: 'default' }),
    { outcome: 'unavailable', reason: 'unexpected answer (422)' });
  t.equal(fake.requests.length, 1, 'a 4xx is not retried');
});

t.test('ElevenLabs: invalid_api_key in an error body is bad_credentials even on an unusual status', async (t) => {
  const fake = await startFakeProvider('elevenlabs', {
    agents: { agent_1: 'x' }, apiKey: KEY,
    fail: { status: 400, times: 'always', body: { detail: { status: 'invalid_api_key', message: 'Invalid API key' } } },
  });
  t.teardown(() => fake.close());
  const el = createProviderRegistry({ elevenlabs: { api_base_url: fake.url } }).get('elevenlabs')!;
  t.same(await el.verify({ externalAgentId: 'agent_1', apiKey: KEY, region: 'eu' }), { outcome: 'bad_credentials' });
});
