/**
 * Storage contract (docs/ARCHITECTURE.md "Storage"), on SQLite and PostgreSQL: post-call webhook
 * deliveries (docs/WEBHOOKS.md "Attribution across tenants", "First attribution wins": the key
 * unique per tenant among applied deliveries, conflicts kept for audit, the raw-byte total kept
 * by triggers) and Idempotency-Key reservations (docs/API.md "Calls": unique per tenant and key,
 * two concurrent reservations and exactly one wins).
 */
import t from 'tap';
import type { TenantId } from '../../src/common/ids.js';
import type { Store, WebhookDelivery } from '../../src/storage/index.js';
import { callRecord } from '../support/call-records.js';
import { onEachBackend } from './contract-rig.js';

const delivery = (tenant: TenantId | null, callId: string | null, overrides: Partial<WebhookDelivery> = {}): Omit<WebhookDelivery, 'received_at'> => ({
  delivery_key: 'elevenlabs:post_call_transcription:conv_1', status: 'accepted', conflict_reason: null, provider: 'elevenlabs',
  event: 'post_call_transcription', conversation_id: 'conv_1', agent_id: 'agent_1', tenant_id: tenant, call_id: callId,
  body_sha256: 'ab'.repeat(32), body_bytes: 20, payload_json: '{"note":"é"}', payload_omitted: null, recording_ref: null, ...overrides,
});

async function endedCall(store: Store, tenant: TenantId, conversationId: string | null = null) {
  const call = callRecord(tenant, '2026-03-01T08:59:00.000Z', {
    direction: 'inbound', from_number: '+15550199', to_number: '+15550100', state: 'ended', ended_at: '2026-03-01T08:59:30.000Z', conversation_id: conversationId,
  });
  await store.calls.insert(call);
  return call;
}

onEachBackend(t, 'docs/WEBHOOKS.md "Attribution across tenants": a delivery key is unique per tenant among applied deliveries', async (t, { store }) => {
  const acme = (await store.tenants.create('Acme')).id;
  const bravo = (await store.tenants.create('Bravo')).id;
  const a = await endedCall(store, acme);
  const b = await endedCall(store, bravo);
  t.ok(await store.webhooks.record(delivery(acme, a.id)));
  t.notOk(await store.webhooks.record(delivery(acme, a.id)), 'the same key again for the tenant: a duplicate (ON CONFLICT DO NOTHING)');
  t.ok(await store.webhooks.record(delivery(bravo, b.id)), 'another tenant: its own key');
  t.ok(await store.webhooks.isDelivered(acme, 'elevenlabs:post_call_transcription:conv_1'));
  const conflict = delivery(null, null, { status: 'conflict', conflict_reason: 'several_tenants' });
  t.ok(await store.webhooks.record(conflict), 'a conflict reserves nothing');
  t.ok(await store.webhooks.record(conflict), 'kept again for audit');
  t.ok(await store.webhooks.isRepeatedConflict(null, null, conflict.delivery_key, conflict.body_sha256), 'null tenant and call match a conflict kept under neither');
  t.notOk(await store.webhooks.isRepeatedConflict(acme, null, conflict.delivery_key, conflict.body_sha256));
});

onEachBackend(t, 'webhooks: first attribution wins, raw bytes kept per call and in total (triggers), conversation bindings', async (t, { store }) => {
  const acme = (await store.tenants.create('Acme')).id;
  const call = await endedCall(store, acme, 'conv_1');
  await store.webhooks.record(delivery(acme, call.id, { delivery_key: 'k1', conversation_id: 'conv_1', recording_ref: 'inline:aa' }));
  await store.webhooks.record(delivery(acme, call.id, { delivery_key: 'k2', conversation_id: 'conv_2', recording_ref: 'url:bb', payload_json: null, payload_omitted: 'per_call_cap' }));
  t.same(await store.webhooks.callDeliveries(acme, call.id), { conversationIds: ['conv_1', 'conv_2'], recordingRef: 'inline:aa' }, 'in the order they were applied');
  const kept = Buffer.byteLength('{"note":"é"}');
  t.same(await store.webhooks.keptRawBytes(acme, call.id), { call: kept, total: kept }, 'byte lengths, not characters; an omitted body counts 0');
  await store.webhooks.record(delivery(null, null, { delivery_key: 'k3', status: 'conflict' }));
  t.same(await store.webhooks.keptRawBytes(null, null), { call: kept, total: 2 * kept });
  const bound = await store.webhooks.attributedConversation('elevenlabs', 'conv_1');
  t.match(bound, [{ tenant_id: acme, call_id: call.id, agent_id: 'agent_1', ended_at: call.ended_at, conversation_id: 'conv_1' }]);
  await store.webhooks.setConversationId(acme, call.id, 'conv_other');
  t.equal((await store.calls.get(acme, call.id))?.conversation_id, 'conv_1', 'a conversation id is set once');
});

onEachBackend(t, 'docs/WEBHOOKS.md "Attribution": routed calls on a DID, with optional agent and direction filters', async (t, { store }) => {
  const acme = (await store.tenants.create('Acme')).id;
  const agent = await store.agents.insert(acme, {
    provider: 'elevenlabs', external_agent_id: 'agent_1', apiKey: null, verifiedAt: null,
    settings: { name: null, connection_mode: 'sip_trunk', region: 'us', sip_credential_id: null, sip_uri: 'sip:a@example.com', sip_transport: 'udp', sip_region: null, websocket_url: null },
  });
  await store.routes.insert(acme, { didNumber: '+15550100', carrier: 'sandbox', agentId: agent.id });
  // The route exists at the call's start (the store's clock reads 09:00).
  const call = callRecord(acme, '2026-03-01T09:01:00.000Z', {
    direction: 'inbound', from_number: '+15550199', to_number: '+15550100', state: 'ended', ended_at: '2026-03-01T09:02:00.000Z',
  });
  await store.calls.insert(call);
  const query = {
    provider: 'elevenlabs', agentNumber: '+15550100', remoteNumber: '+15550199', externalAgentId: null, direction: null,
    endedFrom: '2026-03-01T08:00:00.000Z', endedTo: '2026-03-01T10:00:00.000Z',
  };
  t.match(await store.webhooks.routedCalls(query), [{ tenant_id: acme, call_id: call.id }], 'null filters match any agent and direction');
  t.equal((await store.webhooks.routedCalls({ ...query, externalAgentId: 'agent_1', direction: 'inbound' })).length, 1);
  t.same(await store.webhooks.routedCalls({ ...query, externalAgentId: 'agent_2' }), []);
  t.same(await store.webhooks.routedCalls({ ...query, direction: 'outbound' }), []);
});

onEachBackend(t, 'docs/API.md "Calls": an Idempotency-Key is reserved once, completed, replayed, released', async (t, { store, clock }) => {
  const acme = (await store.tenants.create('Acme')).id;
  const bravo = (await store.tenants.create('Bravo')).id;
  t.same(await store.idempotency.reserve(acme, 'key-1', 'h1'), { outcome: 'reserved' });
  t.same(await store.idempotency.reserve(acme, 'key-1', 'h2'), { outcome: 'in_flight', requestHash: 'h1' });
  t.same(await store.idempotency.reserve(bravo, 'key-1', 'h3'), { outcome: 'reserved' }, 'keys are per tenant');
  await store.idempotency.complete(acme, 'key-1', 201, '{"id":"call_1"}');
  t.same(await store.idempotency.reserve(acme, 'key-1', 'h1'), { outcome: 'completed', requestHash: 'h1', status: 201, responseJson: '{"id":"call_1"}' });
  await store.idempotency.release(bravo, 'key-1');
  t.same(await store.idempotency.reserve(bravo, 'key-1', 'h4'), { outcome: 'reserved' }, 'a released key runs again');
  clock.advance(6 * 60_000);
  t.same(await store.idempotency.reserve(bravo, 'key-1', 'h5'), { outcome: 'reserved' }, 'an abandoned reservation is taken over');
  clock.advance(24 * 3600_000);
  t.same(await store.idempotency.reserve(acme, 'key-1', 'h9'), { outcome: 'reserved' }, 'after 24 h the key is free again');
});

onEachBackend(t, 'docs/API.md "Calls": two concurrent reservations of one key, exactly one wins (on two stores sharing PostgreSQL)', async (t, { backend, store, reopen }) => {
  const acme = (await store.tenants.create('Acme')).id;
  // On PostgreSQL a second store is a second process's pool: the race is between two connections.
  const other = backend === 'postgres' ? await reopen() : store;
  for (let i = 0; i < 20; i++) {
    const results = await Promise.all([store.idempotency.reserve(acme, `key-${i}`, 'first'), other.idempotency.reserve(acme, `key-${i}`, 'second')]);
    const winners = results.filter((r) => r.outcome === 'reserved');
    const losers = results.filter((r) => r.outcome === 'in_flight');
    if (winners.length !== 1 || losers.length !== 1) t.fail(`key-${i}: ${JSON.stringify(results)}`);
  }
  t.pass('20 races: one reservation and one in flight each');
});
