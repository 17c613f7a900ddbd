/**
 * docs/WEBHOOKS.md "Attribution across tenants" and "First attribution wins", over real HTTP on
 * 127.0.0.1: the duplicate key and conversation ids are per tenant, so a tenant posting first with
 * another tenant's conversation id neither drops nor takes that tenant's deliveries.
 */
import t from 'tap';
import type { Test } from 'tap';
import { buildApp, type AppHarness } from '../support/build-app.js';
import { elevenLabsAudio, elevenLabsTranscription, postWebhook, retellCall, serveOnLoopback, type CallFacts } from '../support/fake-providers/post-call-sender.js';
import { webhookTenant, type WebhookTenant } from '../support/webhook-tenants.js';
import { sqliteOf } from '../support/sqlite-of.js';

const A_TURNS: CallFacts['turns'] = [['agent', 'Acme clinic, how can I help?'], ['user', 'My test results please, date of birth 1 May 1970.']];
const B_TURNS: CallFacts['turns'] = [['agent', 'Hello from Bravo.'], ['user', 'Hi.']];
const MP3 = Buffer.concat([Buffer.from('ID3\x04\x00\x00', 'latin1'), Buffer.alloc(6000, 0xa5)]);

async function twoTenants(t: Test, provider: string, agents: { a: string; b: string }) {
  const h = await buildApp(t);
  const base = await serveOnLoopback(t, h.api.app.callback());
  const acme = await webhookTenant(h, 'Acme', { provider, externalAgentId: agents.a, did: '+14155550100', caller: '+14155550199' });
  const bravo = await webhookTenant(h, 'Bravo', { provider, externalAgentId: agents.b, did: '+12125550100', caller: '+12125550199', endedAgoMs: 120_000 });
  return { h, base, acme, bravo };
}

const facts = (tenant: WebhookTenant, conversationId: string, agentId: string | null, turns: CallFacts['turns']): CallFacts =>
  ({ conversationId, agentId, did: tenant.did, caller: tenant.caller, endMs: tenant.endMs, turns });

async function recordingOf(h: AppHarness, tenant: WebhookTenant): Promise<{ status: number; bytes: Buffer }> {
  const res = await h.request({ method: 'GET', url: `/v1/calls/${tenant.call.id}/recording`, headers: tenant.auth });
  return { status: res.statusCode, bytes: res.rawPayload };
}

const turnTexts = async (h: AppHarness, tenant: WebhookTenant): Promise<string[]> =>
  ((await h.store.transcripts.get(tenant.tenant.id, tenant.call.id, 'provider')) ?? []).map((turn) => turn.text);

t.test('WEBHOOKS attribution across tenants: B posting first with A\'s conversation id neither drops A\'s delivery nor receives A\'s audio (ElevenLabs)', async (t) => {
  const { h, base, acme, bravo } = await twoTenants(t, 'elevenlabs', { a: 'agent_acme', b: 'agent_bravo' });
  // Bravo's own call, described truthfully except for the conversation id, which is Acme's.
  t.same(await postWebhook(base, 'elevenlabs', elevenLabsTranscription(facts(bravo, 'conv_acme_1', 'agent_bravo', B_TURNS))), { http: 200, status: 'accepted' },
    'Bravo\'s payload describes Bravo\'s own call');

  t.same(await postWebhook(base, 'elevenlabs', elevenLabsTranscription(facts(acme, 'conv_acme_1', 'agent_acme', A_TURNS))), { http: 200, status: 'accepted' },
    'Acme\'s genuine transcription is not a duplicate of Bravo\'s');
  t.same(await turnTexts(h, acme), A_TURNS.map(([, text]) => text), 'Acme\'s transcript is stored on Acme\'s call');
  t.equal((await h.store.calls.get(acme.tenant.id, acme.call.id))?.conversation_id, 'conv_acme_1');

  t.same(await postWebhook(base, 'elevenlabs', elevenLabsAudio('conv_acme_1', 'agent_acme', MP3)), { http: 200, status: 'accepted' });
  const acmeRecording = await recordingOf(h, acme);
  t.equal(acmeRecording.status, 200);
  t.ok(acmeRecording.bytes.equals(MP3), 'Acme\'s audio is archived on Acme\'s call');
  t.equal((await recordingOf(h, bravo)).status, 404, 'Bravo has no recording');
  t.equal(await h.store.recordings.get(bravo.tenant.id, bravo.call.id, 'provider'), undefined);
  t.same(await turnTexts(h, bravo), B_TURNS.map(([, text]) => text), 'Bravo\'s call holds only what Bravo posted');
  const bravoRows = sqliteOf(h.store).prepare('SELECT event FROM webhook_deliveries WHERE tenant_id = ?').pluck().all(bravo.tenant.id);
  t.same(bravoRows, ['post_call_transcription'], 'no delivery of Acme\'s is filed under Bravo');
});

t.test('WEBHOOKS attribution across tenants: a Retell payload without an agent id, posted first with A\'s call id, does not capture A\'s deliveries', async (t) => {
  const { h, base, acme, bravo } = await twoTenants(t, 'retell', { a: 'retell_agent_acme', b: 'retell_agent_bravo' });
  t.same(await postWebhook(base, 'retell', retellCall(facts(bravo, 'acme_call_1', null, B_TURNS))), { http: 200, status: 'accepted' });
  // The agent id is optional in Retell payloads; Acme's genuine one leaves it out too.
  t.same(await postWebhook(base, 'retell', retellCall(facts(acme, 'acme_call_1', null, A_TURNS))), { http: 200, status: 'accepted' });
  t.same(await postWebhook(base, 'retell', retellCall(facts(acme, 'acme_call_1', null, A_TURNS), 'call_analyzed')), { http: 200, status: 'accepted' },
    'Acme\'s second event attributes to Acme, not to the call that claimed the id first');
  t.same(await turnTexts(h, acme), A_TURNS.map(([, text]) => text));
  t.same(await turnTexts(h, bravo), B_TURNS.map(([, text]) => text));
  t.same(sqliteOf(h.store).prepare('SELECT event FROM webhook_deliveries WHERE tenant_id = ? ORDER BY id').pluck().all(acme.tenant.id), ['call_ended', 'call_analyzed']);
});

t.test('WEBHOOKS attribution across tenants: a conversation id bound in two tenants attributes audio to neither; kept as conflict', async (t) => {
  // Bravo imported an agent under Acme's external id (nothing verifies an agent imported without a key).
  const { h, base, acme, bravo } = await twoTenants(t, 'elevenlabs', { a: 'agent_shared', b: 'agent_shared' });
  t.equal((await postWebhook(base, 'elevenlabs', elevenLabsTranscription(facts(bravo, 'conv_acme_2', 'agent_shared', B_TURNS)))).status, 'accepted');
  t.equal((await postWebhook(base, 'elevenlabs', elevenLabsTranscription(facts(acme, 'conv_acme_2', 'agent_shared', A_TURNS)))).status, 'accepted');
  t.same(await postWebhook(base, 'elevenlabs', elevenLabsAudio('conv_acme_2', 'agent_shared', MP3)), { http: 200, status: 'ignored' },
    'answered like any payload that attributes to nothing');
  t.equal((await recordingOf(h, bravo)).status, 404, 'Bravo gets nothing');
  t.equal((await recordingOf(h, acme)).status, 404, 'and nothing is guessed for Acme');
  const kept = sqliteOf(h.store).prepare("SELECT tenant_id, call_id, event, status FROM webhook_deliveries WHERE status = 'conflict'").all();
  t.same(kept, [{ tenant_id: null, call_id: null, event: 'post_call_audio', status: 'conflict' }], 'kept for audit under no tenant');
  t.ok(h.logLines.some((l) => l.includes('"status":"conflict"') && l.includes('post_call_audio')), 'the conflict is logged');
  t.notOk(h.logLines.some((l) => l.includes('conflict') && (l.includes(acme.tenant.id) || l.includes(bravo.tenant.id))), 'the log names neither tenant');
});
