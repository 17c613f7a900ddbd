/**
 * docs/WEBHOOKS.md "First attribution wins", over real HTTP on 127.0.0.1: a payload forged from a
 * call's DID and caller (and, for Retell and Vapi, no agent id) with a fresh conversation id
 * replaces nothing a genuine earlier delivery stored; it is kept for audit as a conflict.
 */
import t, { type Test } from 'tap';
import { createHash } from 'node:crypto';
import type { ResolvedAddress } from '../../src/providers/index.js';
import { buildApp, type AppHarness } from '../support/build-app.js';
import { startHttpsFixture } from '../support/https-fixture.js';
import {
  elevenLabsAudio, elevenLabsTranscription, postWebhook, retellCall, serveOnLoopback, vapiReport, type CallFacts,
} from '../support/fake-providers/post-call-sender.js';
import { webhookTenant, type WebhookTenant } from '../support/webhook-tenants.js';
import { sqliteOf } from '../support/sqlite-of.js';

const GENUINE: CallFacts['turns'] = [['agent', 'Front desk, how can I help?'], ['user', 'Please cancel my appointment.']];
const FORGED: CallFacts['turns'] = [['agent', 'Front desk.'], ['user', 'Please send my file to this new address.']];
const GENUINE_WAV = Buffer.from(Array.from({ length: 4000 }, (_, i) => (i * 7) & 255));
const FORGED_WAV = Buffer.alloc(4000, 0x42);

const facts = (tenant: WebhookTenant, conversationId: string, agentId: string | null, turns: CallFacts['turns']): CallFacts =>
  ({ conversationId, agentId, did: tenant.did, caller: tenant.caller, endMs: tenant.endMs, turns });

const texts = async (h: AppHarness, tenant: WebhookTenant): Promise<string[]> =>
  ((await h.store.transcripts.get(tenant.tenant.id, tenant.call.id, 'provider')) ?? []).map((turn) => turn.text);

async function recordingBytes(h: AppHarness, tenant: WebhookTenant): Promise<Buffer> {
  const res = await h.request({ method: 'GET', url: `/v1/calls/${tenant.call.id}/recording`, headers: tenant.auth });
  if (res.statusCode !== 200) throw new Error(`recording: HTTP ${res.statusCode}`);
  return res.rawPayload;
}

const conflicts = (h: AppHarness) =>
  sqliteOf(h.store).prepare("SELECT tenant_id, call_id, conversation_id, conflict_reason, payload_json FROM webhook_deliveries WHERE status = 'conflict' ORDER BY id").all() as
    { tenant_id: string; call_id: string; conversation_id: string; conflict_reason: string; payload_json: string }[];

/** Recording URLs on media.recordings.test reach an HTTPS fixture on 127.0.0.1 (that one name only). */
async function withRecordings(t: Test) {
  const fx = await startHttpsFixture(t, (req, res) => {
    const body = req.url === '/genuine.wav' ? GENUINE_WAV : req.url === '/forged.wav' ? FORGED_WAV : undefined;
    if (body) res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': body.length }).end(body);
    else res.writeHead(404).end();
  });
  const loopback: ResolvedAddress[] = [{ address: '127.0.0.1', family: 4 }];
  const h = await buildApp(t, {
    webhooks: { recordingHosts: { elevenlabs: [], retell: ['*.recordings.test'], vapi: ['*.recordings.test'] } },
    recordingDownload: {
      ca: fx.ca,
      resolver: (host) => (host === 'media.recordings.test' ? Promise.resolve(loopback) : Promise.reject(new Error('not found'))),
      unsafeAllowAddressForTests: (host, address) => host === 'media.recordings.test' && address === '127.0.0.1',
    },
  });
  return { fx, h, base: await serveOnLoopback(t, h.api.app.callback()) };
}

t.test('WEBHOOKS first attribution wins: a forged Retell payload with a fresh call id replaces neither transcript nor recording', async (t) => {
  const { fx, h, base } = await withRecordings(t);
  const acme = await webhookTenant(h, 'Acme', { provider: 'retell', externalAgentId: 'retell_agent_1', did: '+13105550100', caller: '+13105550199' });
  const genuine = retellCall(facts(acme, 'call_genuine_1', 'retell_agent_1', GENUINE), 'call_ended', { recording_url: fx.url('/genuine.wav') });
  t.same(await postWebhook(base, 'retell', genuine), { http: 200, status: 'accepted' });
  t.ok((await recordingBytes(h, acme)).equals(GENUINE_WAV), 'the genuine recording is archived');

  // What an outsider knows: the DID and the caller. No agent id (optional in Retell payloads).
  const forged = retellCall(facts(acme, 'call_forged_1', null, FORGED), 'call_ended', { recording_url: fx.url('/forged.wav') });
  t.same(await postWebhook(base, 'retell', forged), { http: 200, status: 'ignored' }, 'answered like a payload that attributes to nothing');
  t.same(await texts(h, acme), GENUINE.map(([, text]) => text), 'the transcript is the genuine one');
  t.ok((await recordingBytes(h, acme)).equals(GENUINE_WAV), 'the recording is the genuine one');
  t.notOk(fx.requests.some((r) => r.includes('/forged.wav')), 'the forged recording URL is never fetched');
  t.equal((await h.store.calls.get(acme.tenant.id, acme.call.id))?.conversation_id, 'call_genuine_1');
  t.same(await postWebhook(base, 'retell', forged), { http: 200, status: 'ignored' }, 'the same forgery again');

  const analyzedForged = retellCall(facts(acme, 'call_genuine_1', 'retell_agent_1', FORGED), 'call_analyzed', { recording_url: fx.url('/genuine.wav') });
  t.same(await postWebhook(base, 'retell', analyzedForged), { http: 200, status: 'ignored' }, 'the right call id with other turns');
  t.same(await texts(h, acme), GENUINE.map(([, text]) => text));

  const kept = conflicts(h);
  t.same(kept.map((k) => [k.tenant_id, k.call_id, k.conversation_id, k.conflict_reason]), [
    [acme.tenant.id, acme.call.id, 'call_forged_1', 'conversation_id'],
    [acme.tenant.id, acme.call.id, 'call_genuine_1', 'transcript'],
  ], 'both kept for audit on the call they aimed at, the repeated one once');
  t.match(kept[0]!.payload_json, /send my file to this new address/, 'with the body as received');
  t.ok(h.logLines.some((l) => l.includes('"status":"conflict"') && l.includes('"reason":"conversation_id"') && l.includes(acme.call.id)), 'and logged');

  const analyzed = retellCall(facts(acme, 'call_genuine_1', 'retell_agent_1', GENUINE), 'call_analyzed', { recording_url: fx.url('/genuine.wav') });
  t.same(await postWebhook(base, 'retell', analyzed), { http: 200, status: 'accepted' }, 'the genuine call_analyzed still applies');
  t.equal(fx.requests.filter((r) => r.includes('/genuine.wav')).length, 1, 'its recording, archived already, is not fetched again');
});

t.test('WEBHOOKS first attribution wins: forged ElevenLabs transcription and audio under a fresh conversation id change nothing', async (t) => {
  const h = await buildApp(t);
  const base = await serveOnLoopback(t, h.api.app.callback());
  const acme = await webhookTenant(h, 'Acme', { provider: 'elevenlabs', externalAgentId: 'agent_el_1', did: '+13105550200', caller: '+13105550299' });
  const mp3 = Buffer.concat([Buffer.from('ID3\x04\x00\x00', 'latin1'), Buffer.alloc(5000, 0x11)]);
  t.equal((await postWebhook(base, 'elevenlabs', elevenLabsTranscription(facts(acme, 'conv_genuine', 'agent_el_1', GENUINE)))).status, 'accepted');
  t.equal((await postWebhook(base, 'elevenlabs', elevenLabsAudio('conv_genuine', 'agent_el_1', mp3))).status, 'accepted');

  // The agent id is public enough (it is in the page's widget code); the conversation id is new.
  t.equal((await postWebhook(base, 'elevenlabs', elevenLabsTranscription(facts(acme, 'conv_forged', 'agent_el_1', FORGED)))).status, 'ignored');
  t.equal((await postWebhook(base, 'elevenlabs', elevenLabsAudio('conv_forged', 'agent_el_1', Buffer.alloc(5000, 0x22)))).status, 'ignored',
    'a conversation id only a conflict carried binds nothing');
  t.equal((await postWebhook(base, 'elevenlabs', elevenLabsAudio('conv_genuine', 'agent_el_1', Buffer.alloc(5000, 0x33)))).status, 'duplicate');
  t.same(await texts(h, acme), GENUINE.map(([, text]) => text));
  t.ok((await recordingBytes(h, acme)).equals(mp3), 'the genuine audio stays');
  t.same(conflicts(h).map((k) => [k.conversation_id, k.conflict_reason]), [['conv_forged', 'conversation_id']]);
});

t.test('WEBHOOKS first attribution wins: two audio deliveries of one call at once store one recording, and the file is the one the row names', async (t) => {
  const h = await buildApp(t, { webhooks: { bodyLimitBytes: 16 * 1024 * 1024 } });
  const base = await serveOnLoopback(t, h.api.app.callback());
  const acme = await webhookTenant(h, 'Acme', { provider: 'elevenlabs', externalAgentId: 'agent_el_1', did: '+13105550200', caller: '+13105550299' });
  t.equal((await postWebhook(base, 'elevenlabs', elevenLabsTranscription(facts(acme, 'conv_genuine', 'agent_el_1', GENUINE)))).status, 'accepted');
  // Megabytes each, so the first file is still being written (off the event loop) when the second arrives.
  const first = Buffer.concat([Buffer.from('ID3\x04\x00\x00', 'latin1'), Buffer.alloc(3_000_000, 0x11)]);
  const second = Buffer.concat([Buffer.from('ID3\x04\x00\x00', 'latin1'), Buffer.alloc(3_000_000, 0x22)]);
  const answers = await Promise.all([
    postWebhook(base, 'elevenlabs', elevenLabsAudio('conv_genuine', 'agent_el_1', first)),
    postWebhook(base, 'elevenlabs', elevenLabsAudio('conv_genuine', 'agent_el_1', second)),
  ]);
  t.same(answers.map((a) => a.status).sort(), ['accepted', 'duplicate'], 'one delivery applied, the other a duplicate');
  const row = await h.store.recordings.get(acme.tenant.id, acme.call.id, 'provider');
  const served = await recordingBytes(h, acme);
  t.equal(createHash('sha256').update(served).digest('hex'), row?.sha256, 'the file served is the one the recordings row names');
  t.ok(served.equals(answers[0].status === 'accepted' ? first : second), 'and it is the accepted delivery\'s audio');
});

t.test('WEBHOOKS first attribution wins: a forged Vapi report without an assistant id changes nothing', async (t) => {
  const h = await buildApp(t);
  const base = await serveOnLoopback(t, h.api.app.callback());
  const acme = await webhookTenant(h, 'Acme', { provider: 'vapi', externalAgentId: 'asst_1', did: '+13105550300', caller: '+13105550399' });
  t.equal((await postWebhook(base, 'vapi', vapiReport(facts(acme, 'vapi-genuine', 'asst_1', GENUINE)))).status, 'accepted');
  t.equal((await postWebhook(base, 'vapi', vapiReport(facts(acme, 'vapi-forged', null, FORGED)))).status, 'ignored');
  t.same(await texts(h, acme), GENUINE.map(([, text]) => text));
  t.equal((await h.store.calls.get(acme.tenant.id, acme.call.id))?.conversation_id, 'vapi-genuine');
});
