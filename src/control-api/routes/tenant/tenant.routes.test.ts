/**
 * docs/API.md "Transfers asked by the agent": the tenant's default transfer policy, set with
 * PUT /v1/tenant/transfer-policy and shown by GET /v1/tenant: validated as an agent's policy,
 * cleared with null, and each tenant's own.
 */
import t from 'tap';
import { buildApp } from '../../../../test/support/build-app.js';

const json = { 'content-type': 'application/json' };

t.test('PUT /v1/tenant/transfer-policy sets the default, GET /v1/tenant shows it, null clears it; another tenant is untouched', async (t) => {
  const h = await buildApp(t);
  const acme = await h.createTenant('Acme');
  const other = await h.createTenant('Other');
  const get = async (auth: { authorization: string }) => (await h.request({ method: 'GET', url: '/v1/tenant', headers: auth })).json<{ transfer_policy: unknown }>();
  t.equal((await get(acme.auth)).transfer_policy, null, 'none by default');
  const policy = { allow: ['+1555*', 'sip:*@pbx.example.com'], max_per_call: 2 };
  const set = await h.request({ method: 'PUT', url: '/v1/tenant/transfer-policy', headers: { ...acme.auth, ...json }, payload: JSON.stringify({ transfer_policy: policy }) });
  t.equal(set.statusCode, 200, set.body);
  t.same(set.json().transfer_policy, policy, 'the answer is the tenant with its policy');
  t.same((await get(acme.auth)).transfer_policy, policy);
  t.equal((await get(other.auth)).transfer_policy, null, 'another tenant keeps its own (none)');
  t.same(await h.store.tenants.transferPolicy(acme.tenant.id), policy, 'stored for the call layer');
  const cleared = await h.request({ method: 'PUT', url: '/v1/tenant/transfer-policy', headers: { ...acme.auth, ...json }, payload: JSON.stringify({ transfer_policy: null }) });
  t.equal(cleared.statusCode, 200);
  t.equal((await get(acme.auth)).transfer_policy, null, 'null removes it');
});

t.test('PUT /v1/tenant/transfer-policy refuses what an agent\'s policy refuses, with 400 validation_failed, and changes nothing', async (t) => {
  const h = await buildApp(t);
  const acme = await h.createTenant('Acme');
  for (const [name, body] of [
    ['a pattern that is neither a number nor a SIP address', { transfer_policy: { allow: ['1900*'], max_per_call: 1 } }],
    ['a cap of 0', { transfer_policy: { allow: ['+1*'], max_per_call: 0 } }],
    ['no policy field', {}],
    ['an unknown field', { transfer_policy: null, extra: true }],
    ['more than 50 patterns', { transfer_policy: { allow: Array.from({ length: 51 }, (_, i) => `+1${i}*`), max_per_call: 1 } }],
  ] as const) {
    const r = await h.request({ method: 'PUT', url: '/v1/tenant/transfer-policy', headers: { ...acme.auth, ...json }, payload: JSON.stringify(body) });
    t.equal(r.statusCode, 400, name);
    t.equal(r.json().code, 'validation_failed', name);
  }
  t.equal(await h.store.tenants.transferPolicy(acme.tenant.id), null, 'nothing was stored');
  const anonymous = await h.request({ method: 'PUT', url: '/v1/tenant/transfer-policy', headers: json, payload: JSON.stringify({ transfer_policy: null }) });
  t.equal(anonymous.statusCode, 401, 'credentials are required');
});
