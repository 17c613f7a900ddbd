import t from 'tap';
import { overridesFor, startFakeProvider } from './fake-provider.js';

t.test('the fake ElevenLabs answers 401, 404 with the documented body, and 200, and records requests', async (t) => {
  const fake = await startFakeProvider('elevenlabs', { agents: ['agent_1'], apiKey: 'k-1' });
  t.teardown(() => fake.close());
  const get = (id: string, key: string) => fetch(`${fake.url}/v1/convai/agents/${id}`, { headers: { 'xi-api-key': key } });
  const wrong = await get('agent_1', 'nope');
  t.equal(wrong.status, 401);
  t.same(await wrong.json(), { detail: { status: 'invalid_api_key', message: 'Invalid API key' } });
  const missing = await get('agent_2', 'k-1');
  t.equal(missing.status, 404);
  t.same(await missing.json(), { detail: { status: 'agent_not_found', message: 'Agent not found' } });
  const found = await get('agent_1', 'k-1');
  t.equal(found.status, 200);
  t.match(await found.json(), { agent_id: 'agent_1' });
  t.same(fake.requests.map((r) => r.headers['xi-api-key']), ['nope', 'k-1', 'k-1']);
  t.same(overridesFor(fake), { elevenlabs: { api_base_url: fake.url } });
});

t.test('update() switches failures on and off between requests', async (t) => {
  const fake = await startFakeProvider('vapi', { agents: { a1: 'A' }, apiKey: 'k-1' });
  t.teardown(() => fake.close());
  const get = () => fetch(`${fake.url}/assistant/a1`, { headers: { authorization: 'Bearer k-1' } }).then((r) => r.status);
  t.equal(await get(), 200);
  fake.update({ fail: { status: 500, times: 1 } });
  t.equal(await get(), 500);
  t.equal(await get(), 200);
  fake.update({ apiKey: 'k-2' });
  t.equal(await get(), 401);
});
