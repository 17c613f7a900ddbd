/** docs/API.md "Agents, routes, numbers and SIP credentials": the import rules, over the real API and fake providers. */
import t from 'tap';
import { buildInventory, EL_KEY, RETELL_KEY, VAPI_KEY } from '../support/inventory.js';

const code = (res: { body: string }) => (JSON.parse(res.body) as { code: string }).code;

t.test('import: 200 with the agent, key redacted, defaults filled, route created with did_number', async (t) => {
  const h = await buildInventory(t);
  await h.store.numbers.add(h.acme.tenant.id, '+15550100', 'sandbox');
  const res = await h.importAgent({ provider: 'elevenlabs', external_agent_id: 'agent_el_1', api_key: EL_KEY, did_number: '+15550100', name: 'Front desk' });
  t.equal(res.statusCode, 200, res.body);
  const body = JSON.parse(res.body);
  t.match(body, { provider: 'elevenlabs', external_agent_id: 'agent_el_1', name: 'Front desk', connection_mode: 'sip_trunk', region: 'default', sip_transport: 'tcp', api_key_set: true, api_key_last4: EL_KEY.slice(-4) });
  t.match(body.id, /^agt_/);
  t.ok(body.verified_at, 'verified live');
  t.notOk('api_key' in body, 'description rule 3: the key is not in the response');
  t.match(body.route, { did_number: '+15550100', agent_provider: 'external_bridge', agent_id: body.id, carrier: 'sandbox' });
  t.equal(h.elevenlabs.requests.at(-1)?.headers['xi-api-key'], EL_KEY, 'verified with the tenant key in the documented header');
  const plain = await h.importAgent({ provider: 'vapi', external_agent_id: 'any-assistant' });
  t.equal(plain.statusCode, 200, 'no api_key: nothing to verify');
  t.equal(JSON.parse(plain.body).route, null);
  t.equal(JSON.parse(plain.body).verified_at, null);
});

t.test('import: the 400 rules each with their code', async (t) => {
  const h = await buildInventory(t);
  const cases: [string, Record<string, unknown>, string][] = [
    ['unsupported provider', { provider: 'acme-ai', external_agent_id: 'a' }, 'unsupported_provider'],
    ['unsupported mode', { provider: 'elevenlabs', external_agent_id: 'a', connection_mode: 'carrier_pigeon' }, 'unsupported_connection_mode'],
    ['a mode the provider does not offer (Retell has no audio WebSocket)', { provider: 'retell', external_agent_id: 'agent_rt_1', connection_mode: 'media_bridge' }, 'unsupported_connection_mode'],
    ['a DID the tenant does not hold', { provider: 'elevenlabs', external_agent_id: 'a', did_number: '+15550999' }, 'did_not_routable'],
    ['the provider rejects the key', { provider: 'elevenlabs', external_agent_id: 'agent_el_1', api_key: 'sk_wrong_key_000000' }, 'provider_credentials_invalid'],
    ['an unknown SIP credential', { provider: 'elevenlabs', external_agent_id: 'a', sip_credential_id: 'sipc_nope' }, 'unknown_sip_credential'],
    ['a region the provider lacks', { provider: 'elevenlabs', external_agent_id: 'a', region: 'mars' }, 'validation_failed'],
    ['custom sip_trunk without a SIP target', { provider: 'custom', external_agent_id: 'a' }, 'validation_failed'],
    ['custom media_bridge without a WebSocket', { provider: 'custom', external_agent_id: 'a', connection_mode: 'media_bridge' }, 'validation_failed'],
    ['a websocket_url on loopback', { provider: 'custom', external_agent_id: 'a', connection_mode: 'media_bridge', websocket_url: 'ws://127.0.0.1:9/x' }, 'validation_failed'],
    ['a websocket_url at the metadata address', { provider: 'custom', external_agent_id: 'a', connection_mode: 'media_bridge', websocket_url: 'ws://169.254.169.254/' }, 'validation_failed'],
    ['a malformed DID', { provider: 'elevenlabs', external_agent_id: 'a', did_number: '5550100' }, 'validation_failed'],
    ['an unknown field', { provider: 'elevenlabs', external_agent_id: 'a', colour: 'red' }, 'validation_failed'],
    ['no external_agent_id', { provider: 'elevenlabs' }, 'validation_failed'],
    ['a bad transport', { provider: 'elevenlabs', external_agent_id: 'a', sip_transport: 'sctp' }, 'validation_failed'],
    ['a sip_uri that is not SIP', { provider: 'custom', external_agent_id: 'a', sip_uri: 'http://edge' }, 'validation_failed'],
  ];
  for (const [name, body, expected] of cases) {
    const res = await h.importAgent(body);
    t.equal(res.statusCode, 400, name);
    t.equal(code(res), expected, name);
  }
  t.equal((await h.request({ method: 'GET', url: '/v1/agents', headers: h.acme.auth })).body.includes('"data":[]'), true, 'nothing was stored by any of them');
});

t.test('import: platform 404 → 404, platform down → 502, duplicate → 409 with the existing id', async (t) => {
  const h = await buildInventory(t);
  const missing = await h.importAgent({ provider: 'elevenlabs', external_agent_id: 'agent_gone', api_key: EL_KEY });
  t.equal(missing.statusCode, 404);
  t.equal(code(missing), 'agent_not_found_on_platform');
  const retellMissing = await h.importAgent({ provider: 'retell', external_agent_id: 'agent_nope', api_key: RETELL_KEY });
  t.equal(code(retellMissing), 'agent_not_found_on_platform');
  h.vapi.update({ fail: { status: 503, times: 'always' } });
  const down = await h.importAgent({ provider: 'vapi', external_agent_id: '3f1e0c2a-1111-4222-8333-444455556666', api_key: VAPI_KEY });
  t.equal(down.statusCode, 502);
  t.equal(code(down), 'provider_unavailable');
  // The request id is random hex and may hold "503" itself: only what the problem says is read.
  const { request_id: _requestId, ...said } = JSON.parse(down.body) as Record<string, unknown>;
  t.notMatch(JSON.stringify(said), /503|vapi/i, 'the upstream answer is not relayed');
  h.vapi.update({ fail: undefined, slowMs: 5_000 });
  const slow = await h.importAgent({ provider: 'vapi', external_agent_id: '3f1e0c2a-1111-4222-8333-444455556666', api_key: VAPI_KEY });
  t.equal(slow.statusCode, 502, 'an answer past the time-out is provider_unavailable');
  h.vapi.update({ slowMs: 0 });

  const first = await h.importAgent({ provider: 'retell', external_agent_id: 'agent_rt_1', api_key: RETELL_KEY });
  t.equal(first.statusCode, 200);
  const again = await h.importAgent({ provider: 'retell', external_agent_id: 'agent_rt_1' });
  t.equal(again.statusCode, 409);
  t.equal(code(again), 'agent_already_imported');
  t.equal(JSON.parse(again.body).existing_id, JSON.parse(first.body).id);
});

t.test('PUT: immutable fields, defaults on omission, api_key keep / clear / replace', async (t) => {
  const h = await buildInventory(t);
  const created = JSON.parse((await h.importAgent({ provider: 'elevenlabs', external_agent_id: 'agent_el_1', api_key: EL_KEY, name: 'A', region: 'eu', sip_transport: 'tls' })).body);
  const put = (payload: Record<string, unknown>) => h.request({ method: 'PUT', url: `/v1/agents/${created.id}`, headers: h.acme.auth, payload });
  for (const field of [{ provider: 'vapi' }, { external_agent_id: 'agent_el_2' }, { did_number: '+15550100' }]) {
    const res = await put(field);
    t.equal(res.statusCode, 400);
    t.equal(code(res), 'immutable_field', JSON.stringify(field));
  }
  t.equal((await put({ provider: 'elevenlabs', name: 'same provider is fine' })).statusCode, 200);
  const reset = JSON.parse((await put({})).body);
  t.match(reset, { name: null, region: 'default', sip_transport: 'tcp', api_key_set: true }, 'omitted settings return to defaults; the key is kept');
  const cleared = JSON.parse((await put({ api_key: null })).body);
  t.match(cleared, { api_key_set: false, api_key_last4: null, verified_at: null });
  const badKey = await put({ api_key: 'sk_not_the_key_123' });
  t.equal(code(badKey), 'provider_credentials_invalid', 'a new key is verified as at import');
  const replaced = JSON.parse((await put({ api_key: EL_KEY, connection_mode: 'media_bridge' })).body);
  t.match(replaced, { api_key_set: true, connection_mode: 'media_bridge' });
  t.ok(replaced.verified_at);
  t.equal((await h.request({ method: 'PUT', url: '/v1/agents/agt_missing', headers: h.acme.auth, payload: {} })).statusCode, 404);
});

t.test('routes and numbers: delete, release removes routes, re-import only after the number is added back', async (t) => {
  const h = await buildInventory(t);
  const tenantId = h.acme.tenant.id;
  await h.store.numbers.add(tenantId, '+15550100', 'sandbox');
  const first = JSON.parse((await h.importAgent({ provider: 'elevenlabs', external_agent_id: 'agent_el_1', did_number: '+15550100' })).body);
  const taken = await h.importAgent({ provider: 'elevenlabs', external_agent_id: 'agent_el_2', did_number: '+15550100' });
  t.equal(code(taken), 'did_not_routable', 'a DID already routed is not routable');
  const list = JSON.parse((await h.request({ method: 'GET', url: '/v1/routes', headers: h.acme.auth })).body);
  t.same(list.data.map((r: { id: string }) => r.id), [first.route.id]);
  const release = (payload: Record<string, unknown>) => h.request({ method: 'POST', url: '/v1/numbers/release', headers: h.acme.auth, payload });
  const released = await release({ phone_number: '+15550100', carrier: 'sandbox' });
  t.equal(released.statusCode, 200);
  t.match(JSON.parse(released.body), { phone_number: '+15550100', carrier: 'sandbox', status: 'released', routes_removed: 1 });
  t.equal(code(await release({ phone_number: '+15550100', carrier: 'sandbox' })), 'number_already_released');
  t.equal((await release({ phone_number: '+15550177', carrier: 'sandbox' })).statusCode, 404, 'never held');
  t.equal((await h.request({ method: 'GET', url: `/v1/routes/${first.route.id}`, headers: h.acme.auth })).statusCode, 404, 'the route went with the number');
  t.equal(code(await h.importAgent({ provider: 'elevenlabs', external_agent_id: 'agent_el_2', did_number: '+15550100' })), 'did_not_routable', 'released: not routable');
  await h.store.numbers.add(tenantId, '+15550100', 'sandbox');
  const back = await h.importAgent({ provider: 'elevenlabs', external_agent_id: 'agent_el_2', did_number: '+15550100' });
  t.equal(back.statusCode, 200, 'routable again once the number is added back');
  const routeId = JSON.parse(back.body).route.id;
  t.equal((await h.request({ method: 'DELETE', url: `/v1/routes/${routeId}`, headers: h.acme.auth })).statusCode, 204);
  t.equal((await h.request({ method: 'DELETE', url: `/v1/routes/${routeId}`, headers: h.acme.auth })).statusCode, 404);
});

t.test('SIP credentials: 201 without the password, in use by an agent → 409, then deletable', async (t) => {
  const h = await buildInventory(t);
  const res = await h.request({ method: 'POST', url: '/v1/sip-credentials', headers: h.acme.auth, payload: { username: 'gw', password: 'pa55-word!', realm: 'sip.example.net' } });
  t.equal(res.statusCode, 201);
  const cred = JSON.parse(res.body);
  t.same(Object.keys(cred).sort(), ['created_at', 'id', 'realm', 'username']);
  const agent = JSON.parse((await h.importAgent({ provider: 'custom', external_agent_id: 'edge', sip_uri: 'sip:agent@edge.example.net;transport=tls', sip_credential_id: cred.id })).body);
  t.equal(agent.sip_credential_id, cred.id);
  const del = () => h.request({ method: 'DELETE', url: `/v1/sip-credentials/${cred.id}`, headers: h.acme.auth });
  t.equal(code(await del()), 'in_use');
  await h.request({ method: 'PUT', url: `/v1/agents/${agent.id}`, headers: h.acme.auth, payload: { sip_uri: 'sip:agent@edge.example.net' } });
  t.equal((await del()).statusCode, 204, 'free once no agent refers to it');
  t.equal(await h.store.sipCredentials.password(h.acme.tenant.id, cred.id), undefined);
});
