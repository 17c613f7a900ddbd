import t from 'tap';
import { createProviderRegistry } from '../registry.js';

t.test('docs/API.md "Agents, routes, numbers and SIP credentials": custom offers both modes and no defaults, so the tenant gives the target', (t) => {
  const custom = createProviderRegistry().get('custom')!;
  t.same(custom.connectionModes, ['sip_trunk', 'media_bridge']);
  t.same(custom.regions, ['default']);
  t.equal(custom.defaultRegion, 'default');
  t.equal(custom.defaultSipTransport, 'udp');
  t.same(custom.endpoints('default'), {});
  t.equal(custom.defaultSipUri('default', { didNumber: '+15551234567', externalAgentId: 'x' }), null);
  t.equal(custom.defaultStreamingUrl('default', 'x'), null);
  t.throws(() => custom.endpoints('us'), { name: 'InvariantError' });
  t.end();
});

t.test('docs/API.md "Agents, routes, numbers and SIP credentials": custom verify is not_supported and touches no network', async (t) => {
  let fetches = 0;
  const countingFetch: typeof fetch = (...args) => {
    fetches += 1;
    return fetch(...args);
  };
  const custom = createProviderRegistry({ custom: { api_base_url: 'http://127.0.0.1:9' } }, { fetch: countingFetch }).get('custom')!;
  const result = await custom.verify({ externalAgentId: 'my-bot', apiKey: 'secret-custom-key-1234', region: 'default' });
  t.same(result, { outcome: 'not_supported' });
  t.equal(fetches, 0);
});
