/**
 * docs/WEBHOOKS.md "Attribution" and "Attribution across tenants", on a real SQLite store: the
 * routed-DID rule, the conversation-id rule for payloads without numbers, the attribution window,
 * and a conversation id held by calls of two tenants attributing to neither.
 */
import t, { type Test } from 'tap';
import { randomBytes } from 'node:crypto';
import { FakeClock } from '../common/clock.js';
import { SecretBox } from '../common/secret-box.js';
import { isoTime } from '../common/time.js';
import { openStore, type AgentSettings, type Store } from '../storage/index.js';
import { callRecord } from '../../test/support/call-records.js';
import { attribute } from './attribution.js';
import type { PostCallEvent } from './post-call-ports.js';
import { sqliteOf } from '../../test/support/sqlite-of.js';

const NOW = Date.parse('2026-11-22T10:00:00.000Z');
const WINDOW_MS = 30 * 60_000;
const SETTINGS: AgentSettings = {
  name: null, connection_mode: 'sip_trunk', region: 'us', sip_credential_id: null, sip_uri: null, sip_transport: null, sip_region: null, websocket_url: null,
};

async function world(t: Test) {
  const clock = new FakeClock(NOW);
  const store = await openStore(':memory:', clock, { idleMs: 60_000, absoluteMs: 3_600_000 }, new SecretBox(randomBytes(32)));
  t.teardown(() => store.close());
  return { clock, store };
}

/** A tenant whose DID routes to a Retell agent since an hour ago, and one inbound call from `caller` that ended `endedAgoMs` ago. */
async function tenantWithCall(store: Store, name: string, o: { did: string; caller: string; endedAgoMs: number; conversationId?: string }) {
  const tenant = await store.tenants.create(name);
  const agent = await store.agents.insert(tenant.id, { provider: 'retell', external_agent_id: `agent_${name}`, settings: SETTINGS, apiKey: null, verifiedAt: null });
  const route = await store.routes.insert(tenant.id, { didNumber: o.did, carrier: 'sandbox', agentId: agent.id });
  sqliteOf(store).prepare('UPDATE routes SET created_at = ? WHERE id = ?').run(isoTime(NOW - 3_600_000), route.id);
  const endMs = NOW - o.endedAgoMs;
  const call = callRecord(tenant.id, isoTime(endMs - 30_000), {
    direction: 'inbound', state: 'ended', from_number: o.caller, to_number: o.did, agent_type: 'imported', agent_id: agent.id,
    ended_at: isoTime(endMs), end_reason: 'completed', hangup_by: 'caller', conversation_id: o.conversationId ?? null,
  });
  await store.calls.insert(call);
  return { tenantId: tenant.id, callId: call.id, agentId: `agent_${name}` };
}

const payload = (over: Partial<PostCallEvent>): PostCallEvent => ({
  kind: 'post_call', provider: 'retell', event: 'call_ended', conversationId: 'conv_1', agentId: null, agentNumber: null, remoteNumber: null,
  direction: null, startedAt: null, endedAt: null, turns: [], recording: null, failureReason: null, raw: {}, ...over,
});

const at = (p: PostCallEvent) => ({ payload: p, nowMs: NOW, windowMs: WINDOW_MS });

t.test('WEBHOOKS Attribution: the agent-side number routed to the provider\'s agent and a recent call with the other party', async (t) => {
  const { store } = await world(t);
  const acme = await tenantWithCall(store, 'acme', { did: '+13105550100', caller: '+13105550199', endedAgoMs: 60_000 });
  t.same(await attribute(store.webhooks, at(payload({ agentNumber: '+13105550100', remoteNumber: '+13105550199' }))),
    { tenantId: acme.tenantId, callId: acme.callId, knownConversationId: null, via: 'routed_did' });
  t.equal(await attribute(store.webhooks, at(payload({ agentNumber: '+13105550100', remoteNumber: '+13105550111' }))), undefined, 'another caller: nothing');
  t.equal(await attribute(store.webhooks, at(payload({ agentNumber: '+13105550100', remoteNumber: '+13105550199', agentId: 'agent_other' }))), undefined,
    'a payload naming another agent of the provider: nothing');
  t.equal(await attribute(store.webhooks, at(payload({ provider: 'vapi', agentNumber: '+13105550100', remoteNumber: '+13105550199' }))), undefined,
    'the DID routes to a Retell agent, not a Vapi one');
  t.end();
});

t.test('WEBHOOKS Attribution: a call that ended outside the attribution window attributes to nothing', async (t) => {
  const { store } = await world(t);
  await tenantWithCall(store, 'acme', { did: '+13105550100', caller: '+13105550199', endedAgoMs: WINDOW_MS + 60_000 });
  t.equal(await attribute(store.webhooks, at(payload({ agentNumber: '+13105550100', remoteNumber: '+13105550199' }))), undefined);
  t.end();
});

t.test('WEBHOOKS Attribution: without numbers, a conversation id the gateway saw on one call places the payload', async (t) => {
  const { store } = await world(t);
  const acme = await tenantWithCall(store, 'acme', { did: '+13105550100', caller: '+13105550199', endedAgoMs: 60_000, conversationId: 'conv_seen' });
  t.same(await attribute(store.webhooks, at(payload({ conversationId: 'conv_seen' }))),
    { tenantId: acme.tenantId, callId: acme.callId, knownConversationId: 'conv_seen', via: 'conversation' });
  t.equal(await attribute(store.webhooks, at(payload({ conversationId: 'conv_unknown' }))), undefined, 'an unknown id: nothing');
  t.equal(await attribute(store.webhooks, at(payload({ conversationId: 'conv_seen', agentId: 'agent_other' }))), undefined, 'the same id naming another agent: nothing');
  t.end();
});

t.test('WEBHOOKS Attribution across tenants: a conversation id held by calls of two tenants is contested, attributed to neither', async (t) => {
  const { store } = await world(t);
  await tenantWithCall(store, 'acme', { did: '+13105550100', caller: '+13105550199', endedAgoMs: 60_000, conversationId: 'conv_shared' });
  await tenantWithCall(store, 'bravo', { did: '+13105550200', caller: '+13105550299', endedAgoMs: 90_000, conversationId: 'conv_shared' });
  t.same(await attribute(store.webhooks, at(payload({ conversationId: 'conv_shared' }))), { contested: true });
  t.end();
});

t.test('WEBHOOKS Attribution: the numbers decide through the route even when another tenant claims the conversation id', async (t) => {
  const { store } = await world(t);
  const acme = await tenantWithCall(store, 'acme', { did: '+13105550100', caller: '+13105550199', endedAgoMs: 60_000 });
  await tenantWithCall(store, 'bravo', { did: '+13105550200', caller: '+13105550299', endedAgoMs: 90_000, conversationId: 'conv_1' });
  t.match(await attribute(store.webhooks, at(payload({ conversationId: 'conv_1', agentNumber: '+13105550100', remoteNumber: '+13105550199' }))),
    { tenantId: acme.tenantId, callId: acme.callId, via: 'routed_did' });
  t.end();
});
