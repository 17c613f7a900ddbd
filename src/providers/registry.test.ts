import t from 'tap';
import { FakeClock, type Clock } from '../common/clock.js';
import { startFakeProvider } from '../../test/support/fake-providers/fake-provider.js';
import { createProviderRegistry, PROVIDER_NAMES } from './registry.js';

t.test('docs/API.md "Agents, routes, numbers and SIP credentials": the registry knows the required providers and refuses others', (t) => {
  const registry = createProviderRegistry();
  for (const name of ['elevenlabs', 'retell', 'vapi', 'custom']) t.equal(registry.get(name)?.name, name);
  t.same(registry.names(), [...PROVIDER_NAMES]);
  for (const name of ['twilio', 'ElevenLabs', '__proto__', 'constructor', 'toString', '']) {
    t.equal(registry.get(name), undefined, `unsupported: ${JSON.stringify(name)}`);
  }
  t.end();
});

t.test('docs/API.md "Agents, routes, numbers and SIP credentials": every adapter has a default region among its regions and offers sip_trunk, the import default', (t) => {
  const registry = createProviderRegistry();
  for (const name of registry.names()) {
    const adapter = registry.get(name)!;
    t.ok(adapter.regions.includes(adapter.defaultRegion), `${name} default region`);
    t.ok(adapter.connectionModes.includes('sip_trunk'), `${name} offers sip_trunk`);
    for (const region of adapter.regions) t.type(adapter.endpoints(region), 'object');
  }
  t.end();
});

t.test('docs/CONFIGURATION.md "Operator surface": bad overrides stop the start with the config key named', (t) => {
  t.throws(() => createProviderRegistry({ vapi: { api_base_url: 'not a url' } }), /providers\.vapi\.api_base_url is not a URL/);
  t.throws(() => createProviderRegistry({ vapi: { api_base_url: 'ftp://x' } }), /must use http: or https:/);
  t.throws(() => createProviderRegistry({ vapi: { api_base_url: 'https://u:p@x' } }), /must not carry credentials/);
  t.throws(() => createProviderRegistry({ elevenlabs: { ws_base_url: 'https://x' } }), /ws_base_url must use ws: or wss:/);
  t.throws(() => createProviderRegistry({ retell: { sip_host: 'sip:x;transport=tcp' } }), /sip_host must be a host/);
  t.throws(() => createProviderRegistry({ nope: {} } as never), /providers\.nope: unknown provider/);
  t.throws(() => createProviderRegistry({}, { timeoutMs: 0 }), /timeoutMs/);
  t.end();
});

t.test('docs/API.md "Agents, routes, numbers and SIP credentials": the time-out and the retry back-off run on the injected clock', async (t) => {
  const fake = await startFakeProvider('retell', { agents: { a1: 'A' }, apiKey: 'key-1234567890', slowMs: 60_000 });
  t.teardown(() => fake.close());
  const clock = new FakeClock();
  const retell = createProviderRegistry({ retell: { api_base_url: fake.url } }, { clock, timeoutMs: 5_000 }).get('retell')!;
  const pending = retell.verify({ externalAgentId: 'a1', apiKey: 'key-1234567890', region: 'default' });
  while (fake.requests.length === 0) await new Promise((resolve) => setImmediate(resolve));
  clock.advance(4_999);
  clock.advance(1);
  t.same(await pending, { outcome: 'unavailable', reason: 'no answer within 5000 ms' });
});

t.test('docs/API.md "Agents, routes, numbers and SIP credentials": the retry waits for the back-off on the injected clock', async (t) => {
  const fake = await startFakeProvider('vapi', { agents: { a1: 'A' }, apiKey: 'key-1234567890', fail: { status: 502, times: 1 } });
  t.teardown(() => fake.close());
  const fakeClock = new FakeClock();
  const delays: number[] = [];
  const clock: Clock = {
    now: () => fakeClock.now(),
    monotonic: () => fakeClock.monotonic(),
    setTimeout: (fn, ms) => {
      delays.push(ms);
      return fakeClock.setTimeout(fn, ms);
    },
  };
  const vapi = createProviderRegistry({ vapi: { api_base_url: fake.url } }, { clock, retryBackoffMs: 1_000 }).get('vapi')!;
  const pending = vapi.verify({ externalAgentId: 'a1', apiKey: 'key-1234567890', region: 'us' });
  // Timers: the first attempt's time-out, then the back-off once the 502 has been read.
  while (delays.length < 2) await new Promise((resolve) => setImmediate(resolve));
  t.same(delays, [5_000, 1_000]);
  t.equal(fake.requests.length, 1, 'no second request before the clock moves');
  fakeClock.advance(1_000);
  t.same(await pending, { outcome: 'found', name: 'A' });
  t.equal(fake.requests.length, 2);
});
