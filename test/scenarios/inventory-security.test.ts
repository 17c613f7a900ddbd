/** docs/API.md "Authentication" and docs/API.md "Agents, routes, numbers and SIP credentials": secrets never leave, tenants never see each other's inventory. */
import t from 'tap';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { assertTenantIsolation } from '../support/tenant-isolation.js';
import { buildInventory, EL_KEY } from '../support/inventory.js';

const SIP_PASSWORD = 'Sip-Pa55word-unique-7731';

t.test('docs/API.md "Agents, routes, numbers and SIP credentials": the api_key and SIP password appear in no response, header or log line', async (t) => {
  const h = await buildInventory(t);
  const seen: string[] = [];
  const record = async (p: ReturnType<typeof h.request>) => {
    const res = await p;
    seen.push(res.body, JSON.stringify(res.headers));
    return res;
  };
  const imported = JSON.parse((await record(h.importAgent({ provider: 'elevenlabs', external_agent_id: 'agent_el_1', api_key: EL_KEY }))).body);
  await record(h.importAgent({ provider: 'elevenlabs', external_agent_id: 'agent_el_2', api_key: `${EL_KEY}-wrong` }));
  await record(h.importAgent({ provider: 'elevenlabs', external_agent_id: 'agent_el_1', api_key: EL_KEY }));
  await record(h.request({ method: 'GET', url: `/v1/agents/${imported.id}`, headers: h.acme.auth }));
  await record(h.request({ method: 'GET', url: '/v1/agents', headers: h.acme.auth }));
  await record(h.request({ method: 'PUT', url: `/v1/agents/${imported.id}`, headers: h.acme.auth, payload: { api_key: EL_KEY, name: 'x' } }));
  await record(h.request({ method: 'PUT', url: `/v1/agents/${imported.id}`, headers: h.acme.auth, payload: { api_key: EL_KEY, colour: 1 } }));
  const cred = await record(h.request({ method: 'POST', url: '/v1/sip-credentials', headers: h.acme.auth, payload: { username: 'gw', password: SIP_PASSWORD } }));
  await record(h.request({ method: 'GET', url: `/v1/sip-credentials/${JSON.parse(cred.body).id}`, headers: h.acme.auth }));
  await record(h.request({ method: 'GET', url: '/v1/sip-credentials', headers: h.acme.auth }));
  t.ok(seen.length >= 20 && h.logLines.length >= 10, 'responses and log lines were captured');
  for (const secret of [EL_KEY, SIP_PASSWORD]) {
    t.notOk(seen.some((s) => s.includes(secret)), 'not in any response body or header');
    t.notOk(h.logLines.some((l) => l.includes(secret)), 'not in any log line');
  }
  t.equal(imported.api_key_last4, EL_KEY.slice(-4), 'only the last four characters are shown');
});

t.test('docs/API.md "Agents, routes, numbers and SIP credentials": the raw database file holds no provider key or SIP password', async (t) => {
  const dir = t.testdir({});
  const h = await buildInventory(t, join(dir, 'gateway.db'));
  await h.importAgent({ provider: 'elevenlabs', external_agent_id: 'agent_el_1', api_key: EL_KEY });
  await h.request({ method: 'POST', url: '/v1/sip-credentials', headers: h.acme.auth, payload: { username: 'gw', password: SIP_PASSWORD } });
  t.ok((await h.store.agents.list(h.acme.tenant.id, { limit: 1 })).items[0]?.api_key_set, 'the key was stored');
  const bytes = readdirSync(dir).map((f) => readFileSync(join(dir, f)));
  t.ok(bytes.reduce((n, b) => n + b.length, 0) > 4096, 'the database and its WAL were read');
  for (const secret of [EL_KEY, SIP_PASSWORD]) {
    t.notOk(bytes.some((b) => b.includes(Buffer.from(secret)) || b.includes(Buffer.from(secret, 'utf16le'))), 'not in the file in clear');
  }
  t.equal(await h.store.agents.apiKey(h.acme.tenant.id, (await h.store.agents.list(h.acme.tenant.id, { limit: 1 })).items[0]!.id), EL_KEY, 'yet it opens for call-time use');
});

t.test('docs/API.md "Authentication": tenant isolation on every inventory endpoint', async (t) => {
  const h = await buildInventory(t);
  const intruder = await h.createTenant('Intruder');
  await h.store.numbers.add(h.acme.tenant.id, '+15550100', 'sandbox');
  const agent = JSON.parse((await h.importAgent({ provider: 'elevenlabs', external_agent_id: 'agent_el_1', did_number: '+15550100' })).body);
  const cred = JSON.parse((await h.request({ method: 'POST', url: '/v1/sip-credentials', headers: h.acme.auth, payload: { username: 'gw', password: SIP_PASSWORD } })).body);
  await h.request({ method: 'PUT', url: `/v1/agents/${agent.id}`, headers: intruder.auth, payload: { name: 'intruder was here', api_key: null } });
  const owned = JSON.parse((await h.request({ method: 'GET', url: `/v1/agents/${agent.id}`, headers: h.acme.auth })).body);
  t.equal(owned.updated_at, agent.updated_at, "the intruder's PUT changed nothing");
  t.equal(owned.name, null);
  await assertTenantIsolation(t, h, h.acme, intruder, [
    { name: 'GET agent', request: { method: 'GET', url: `/v1/agents/${agent.id}` }, missing: { method: 'GET', url: '/v1/agents/agt_never' }, ownerStatus: 200 },
    { name: 'PUT agent', request: { method: 'PUT', url: `/v1/agents/${agent.id}`, payload: { name: 'taken over' } }, missing: { method: 'PUT', url: '/v1/agents/agt_never', payload: { name: 'taken over' } }, ownerStatus: 200 },
    { name: 'GET route', request: { method: 'GET', url: `/v1/routes/${agent.route.id}` }, missing: { method: 'GET', url: '/v1/routes/rte_never' }, ownerStatus: 200 },
    { name: 'GET SIP credential', request: { method: 'GET', url: `/v1/sip-credentials/${cred.id}` }, missing: { method: 'GET', url: '/v1/sip-credentials/sipc_never' }, ownerStatus: 200 },
    { name: 'DELETE route', request: { method: 'DELETE', url: `/v1/routes/${agent.route.id}` }, missing: { method: 'DELETE', url: '/v1/routes/rte_never' }, ownerStatus: 204 },
    { name: 'DELETE SIP credential', request: { method: 'DELETE', url: `/v1/sip-credentials/${cred.id}` }, missing: { method: 'DELETE', url: '/v1/sip-credentials/sipc_never' }, ownerStatus: 204 },
    { name: 'release a number', request: { method: 'POST', url: '/v1/numbers/release', payload: { phone_number: '+15550100', carrier: 'sandbox' } }, missing: { method: 'POST', url: '/v1/numbers/release', payload: { phone_number: '+15550111', carrier: 'sandbox' } }, ownerStatus: 200 },
  ]);
  for (const url of ['/v1/agents', '/v1/routes', '/v1/numbers', '/v1/sip-credentials']) {
    const res = await h.request({ method: 'GET', url, headers: intruder.auth });
    t.same(JSON.parse(res.body).data, [], `${url}: another tenant's items are not listed`);
  }
  const other = await h.createTenant('Other');
  await h.store.numbers.add(h.acme.tenant.id, '+15550122', 'sandbox');
  const foreignDid = await h.importAgent({ provider: 'elevenlabs', external_agent_id: 'agent_el_2', did_number: '+15550122' }, other);
  t.equal(JSON.parse(foreignDid.body).code, 'did_not_routable', "another tenant's number cannot be routed");
  const cred2 = JSON.parse((await h.request({ method: 'POST', url: '/v1/sip-credentials', headers: h.acme.auth, payload: { username: 'gw', password: 'x' } })).body);
  const foreignCred = await h.importAgent({ provider: 'custom', external_agent_id: 'e', sip_uri: 'sip:a@edge.example.net', sip_credential_id: cred2.id }, other);
  t.equal(JSON.parse(foreignCred.body).code, 'unknown_sip_credential', "another tenant's credential cannot be used");
});
