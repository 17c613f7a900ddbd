/**
 * Storage contract (docs/ARCHITECTURE.md "Storage"), a tenant's inventory on SQLite and
 * PostgreSQL: agents (imported with their route in one transaction), numbers (one holder at a
 * time; release and route removal in one transaction), routes and SIP credentials
 * (docs/API.md "Agents, routes, numbers and SIP credentials").
 */
import t from 'tap';
import type { TenantId } from '../../src/common/ids.js';
import type { AgentSettings, Store } from '../../src/storage/index.js';
import { onEachBackend } from './contract-rig.js';

const settings: AgentSettings = {
  name: 'Front desk', connection_mode: 'sip_trunk', region: 'us', sip_credential_id: null,
  sip_uri: 'sip:agent@sip.example.com', sip_transport: 'tls', sip_region: null, websocket_url: null,
};

const importAgent = (store: Store, tenant: TenantId, externalId: string, apiKey: string | null = null) =>
  store.agents.insert(tenant, { provider: 'elevenlabs', external_agent_id: externalId, settings, apiKey, verifiedAt: null });

onEachBackend(t, 'agents: sealed key, api_key_set as a boolean, update keeps or clears the key, keyset pages', async (t, { store, clock }) => {
  const tenant = (await store.tenants.create('Acme')).id;
  const agent = await importAgent(store, tenant, 'agent_1', 'sk_secret_1234');
  t.match(agent, { api_key_set: true, api_key_last4: '1234', transfer_policy: null, name: 'Front desk' });
  t.equal(await store.agents.apiKey(tenant, agent.id), 'sk_secret_1234');
  clock.advance(1);
  const kept = await store.agents.update(tenant, agent.id, { ...settings, name: 'Renamed', transfer_policy: { allow: ['+1*'], max_per_call: 1 } }, { kind: 'keep' });
  t.match(kept, { name: 'Renamed', api_key_set: true, api_key_last4: '1234', transfer_policy: { allow: ['+1*'], max_per_call: 1 } });
  const cleared = await store.agents.update(tenant, agent.id, settings, { kind: 'clear' });
  t.match(cleared, { api_key_set: false, api_key_last4: null });
  t.equal(await store.agents.apiKey(tenant, agent.id), null);
  t.equal(await store.agents.update('ten_other' as TenantId, agent.id, settings, { kind: 'keep' }), undefined, 'tenant isolation');
  t.equal((await store.agents.findByExternalId(tenant, 'elevenlabs', 'agent_1'))?.id, agent.id);
  for (let i = 2; i <= 4; i++) {
    clock.advance(1);
    await importAgent(store, tenant, `agent_${i}`);
  }
  const first = await store.agents.list(tenant, { limit: 3 });
  t.same(first.items.map((a) => a.external_agent_id), ['agent_4', 'agent_3', 'agent_2']);
  const second = await store.agents.list(tenant, { limit: 3, after: first.next! });
  t.same(second.items.map((a) => a.external_agent_id), ['agent_1']);
  t.equal(second.next, null);
});

onEachBackend(t, 'agent import: the agent and its route in one transaction; a route refused by routes_live_did takes the agent back', async (t, { store }) => {
  const acme = (await store.tenants.create('Acme')).id;
  const { agent, route } = await store.transaction(async (tx) => {
    const agent = await tx.agents.insert(acme, { provider: 'elevenlabs', external_agent_id: 'agent_1', settings, apiKey: null, verifiedAt: null });
    return { agent, route: await tx.routes.insert(acme, { didNumber: '+15550100001', carrier: 'sandbox', agentId: agent.id }) };
  });
  t.equal((await store.routes.liveForDid('+15550100001', 'sandbox'))?.agent_id, agent.id);
  t.equal((await store.routes.get(acme, route.id))?.id, route.id);
  const refused = store.transaction(async (tx) => {
    const second = await tx.agents.insert(acme, { provider: 'elevenlabs', external_agent_id: 'agent_2', settings, apiKey: null, verifiedAt: null });
    await tx.routes.insert(acme, { didNumber: '+15550100001', carrier: 'sandbox', agentId: second.id });
  });
  const err = await refused.then(() => undefined, (e: unknown) => e);
  t.ok(store.db.dialect.isUniqueViolation(err), 'the live DID is refused as a unique violation');
  t.equal(await store.agents.findByExternalId(acme, 'elevenlabs', 'agent_2'), undefined, 'rolled back: the agent is gone with its route');
  t.equal((await store.agents.list(acme, { limit: 10 })).items.length, 1);
  t.equal(await store.tenants.count(), 1, 'statements after the rolled-back transaction run normally');
});

onEachBackend(t, 'numbers: one holder per carrier; release and route removal in one transaction', async (t, { store, clock }) => {
  const a = (await store.tenants.create('A')).id;
  const b = (await store.tenants.create('B')).id;
  t.ok((await store.numbers.add(a, '+15550100001', 'sandbox')).ok);
  t.same(await store.numbers.add(a, '+15550100001', 'sandbox'), { ok: false, reason: 'already_held' });
  t.same(await store.numbers.add(b, '+15550100001', 'sandbox'), { ok: false, reason: 'held_by_another_tenant' });
  t.ok(await store.numbers.isHeldOn(a, '+15550100001', 'sandbox'));
  const agent = await importAgent(store, a, 'agent_1');
  await store.routes.insert(a, { didNumber: '+15550100001', carrier: 'sandbox', agentId: agent.id });
  clock.advance(1000);
  const release = () => store.transaction(async (tx) => {
    const released = await tx.numbers.release(a, '+15550100001', 'sandbox');
    if (released.outcome !== 'released') return { released, removed: 0 };
    return { released, removed: await tx.routes.deleteForDid(a, '+15550100001', 'sandbox') };
  });
  const first = await release();
  t.match(first, { released: { outcome: 'released', number: { status: 'released' } }, removed: 1 });
  t.equal(await store.routes.liveForDid('+15550100001', 'sandbox'), undefined, 'the route went with the number');
  t.same((await release()).released, { outcome: 'already_released' });
  t.same(await store.numbers.release(b, '+15550100001', 'sandbox'), { outcome: 'not_found' });
  t.ok((await store.numbers.add(b, '+15550100001', 'sandbox')).ok, 'a released number can be held by another tenant');
  t.equal((await store.numbers.activeForTenant(b, '+15550100001'))?.tenant_id, b);
  // A failure after the release rolls the release back too.
  const agentB = await importAgent(store, b, 'agent_b');
  await store.routes.insert(b, { didNumber: '+15550100001', carrier: 'sandbox', agentId: agentB.id });
  await t.rejects(store.transaction(async (tx) => {
    await tx.numbers.release(b, '+15550100001', 'sandbox');
    await tx.routes.deleteForDid(b, '+15550100001', 'sandbox');
    throw new Error('fails after both statements');
  }), /fails after both/);
  t.ok(await store.numbers.isHeldOn(b, '+15550100001', 'sandbox'), 'the release was rolled back');
  t.ok(await store.routes.liveForDid('+15550100001', 'sandbox'), 'the route removal was rolled back');
  const all = await store.numbers.list(null, { limit: 10 });
  t.same(all.items.map((n) => [n.tenant_id, n.status]), [[b, 'active'], [a, 'released']], 'operator list, newest first');
});

onEachBackend(t, 'routes: keyset pages of live routes, delete is soft and once', async (t, { store, clock }) => {
  const tenant = (await store.tenants.create('Acme')).id;
  const agent = await importAgent(store, tenant, 'agent_1');
  const ids = [];
  for (let i = 1; i <= 3; i++) {
    ids.push((await store.routes.insert(tenant, { didNumber: `+1555010000${i}`, carrier: 'sandbox', agentId: agent.id })).id);
    clock.advance(1);
  }
  t.ok(await store.routes.delete(tenant, ids[1]!));
  t.notOk(await store.routes.delete(tenant, ids[1]!), 'deleted once');
  t.notOk(await store.routes.delete('ten_other' as TenantId, ids[0]!), 'tenant isolation');
  const first = await store.routes.list(tenant, { limit: 1 });
  t.same(first.items.map((r) => r.id), [ids[2]]);
  const second = await store.routes.list(tenant, { limit: 1, after: first.next! });
  t.same(second.items.map((r) => r.id), [ids[0]]);
  t.equal(second.next, null);
});

onEachBackend(t, 'SIP credentials: sealed password, count(*) of agents using one refuses its deletion', async (t, { store }) => {
  const tenant = (await store.tenants.create('Acme')).id;
  const cred = await store.sipCredentials.create(tenant, { username: 'trunk', password: 'p4ss', realm: null });
  t.equal(await store.sipCredentials.password(tenant, cred.id), 'p4ss');
  t.equal((await store.sipCredentials.list(tenant, { limit: 5 })).items.length, 1);
  const agent = await store.agents.insert(tenant, {
    provider: 'elevenlabs', external_agent_id: 'a', settings: { ...settings, sip_credential_id: cred.id }, apiKey: null, verifiedAt: null,
  });
  t.equal(await store.sipCredentials.delete(tenant, cred.id), 'in_use');
  await store.agents.update(tenant, agent.id, settings, { kind: 'keep' });
  t.equal(await store.sipCredentials.delete('ten_other' as TenantId, cred.id), 'not_found');
  t.equal(await store.sipCredentials.delete(tenant, cred.id), 'deleted');
  t.equal(await store.sipCredentials.get(tenant, cred.id), undefined);
});
