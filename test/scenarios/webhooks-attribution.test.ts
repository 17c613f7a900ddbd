/** docs/WEBHOOKS.md "Post-call webhooks": post-call webhook attribution, duplicates and what is stored, through buildApp. */
import t, { type Test } from 'tap';
import { isoTime } from '../../src/common/time.js';
import type { AgentSettings, CallRecord } from '../../src/storage/index.js';
import { buildApp, type AppHarness } from '../support/build-app.js';
import { callRecord } from '../support/call-records.js';
import { sqliteOf } from '../support/sqlite-of.js';

const DID = '+14155550100';
const CALLER = '+14155550199';
const EL_AGENT = 'agent_7101k5abc';

const SETTINGS: AgentSettings = {
  name: 'Front desk', connection_mode: 'sip_trunk', region: 'us', sip_credential_id: null, sip_uri: null,
  sip_transport: null, sip_region: null, websocket_url: null,
};

/** Acme holds DID routed to its ElevenLabs agent since an hour ago; one inbound call from CALLER ended `endedAgoMs` ago. */
async function seed(h: AppHarness, over: { endedAgoMs?: number; provider?: string; externalAgentId?: string; call?: Partial<CallRecord> } = {}) {
  const acme = await h.createTenant('Acme');
  const now = h.clock.now();
  const agent = await h.store.agents.insert(acme.tenant.id, {
    provider: over.provider ?? 'elevenlabs', external_agent_id: over.externalAgentId ?? EL_AGENT, settings: SETTINGS, apiKey: null, verifiedAt: null,
  });
  const routeId = (await h.store.routes.insert(acme.tenant.id, { didNumber: DID, carrier: 'sandbox', agentId: agent.id })).id;
  sqliteOf(h.store).prepare('UPDATE routes SET created_at = ? WHERE id = ?').run(isoTime(now - 3_600_000), routeId);
  const endedAgo = over.endedAgoMs ?? 60_000;
  const call = callRecord(acme.tenant.id, isoTime(now - endedAgo - 42_000), {
    direction: 'inbound', state: 'ended', from_number: CALLER, to_number: DID, agent_type: 'imported', agent_id: agent.id,
    ended_at: isoTime(now - endedAgo), end_reason: 'completed', hangup_by: 'caller', ...over.call,
  });
  await h.store.calls.insert(call);
  return { acme, agent, call, routeId, now };
}

/** A documented ElevenLabs `post_call_transcription` (SIP trunk phone_call shape). */
function transcription(over: { conversationId?: string; agentId?: string; agentNumber?: string; externalNumber?: string; startS?: number } = {}) {
  return {
    type: 'post_call_transcription',
    event_timestamp: 1739537297,
    data: {
      agent_id: over.agentId ?? EL_AGENT,
      conversation_id: over.conversationId ?? 'conv_0501k5xyz',
      status: 'done',
      transcript: [
        { role: 'agent', message: 'Hello, how can I help?', time_in_call_secs: 0 },
        { role: 'user', message: 'I would like to book a table.', time_in_call_secs: 3 },
        { role: 'agent', message: 'Done, see you at eight.', time_in_call_secs: 9.5 },
      ],
      metadata: {
        start_time_unix_secs: over.startS ?? 1739537200,
        call_duration_secs: 42,
        phone_call: {
          type: 'sip_trunking', direction: 'inbound', agent_number: over.agentNumber ?? DID,
          external_number: over.externalNumber ?? CALLER, call_sid: 'SCL_abc',
        },
      },
      analysis: { call_successful: 'success' },
    },
  };
}

const post = (h: AppHarness, provider: string, payload: unknown) =>
  h.request({ method: 'POST', url: `/v1/webhooks/${provider}`, payload: JSON.stringify(payload), headers: { 'content-type': 'application/json' } });

async function statusOf(h: AppHarness, provider: string, payload: unknown): Promise<string> {
  const res = await post(h, provider, payload);
  if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${res.body}`);
  return (JSON.parse(res.body) as { status: string }).status;
}

const count = (h: AppHarness, table: string): number => sqliteOf(h.store).prepare(`SELECT count(*) AS n FROM ${table}`).pluck().get() as number;

function assertNothingStored(t: Test, h: AppHarness, callId: string): void {
  t.equal(count(h, 'transcripts'), 0, 'no transcript');
  t.equal(count(h, 'webhook_deliveries'), 0, 'no delivery or audit row');
  t.equal(count(h, 'recordings'), 0, 'no recording');
  t.equal(sqliteOf(h.store).prepare('SELECT conversation_id FROM calls WHERE id = ?').pluck().get(callId), null, 'conversation id untouched');
}

t.test('docs/WEBHOOKS.md "Post-call webhooks": routed DID + recent call from the remote number → accepted; transcript served with source provider', async (t) => {
  const h = await buildApp(t);
  const { acme, call } = await seed(h);
  t.equal(await statusOf(h, 'elevenlabs', transcription()), 'accepted');
  const detail = JSON.parse((await h.request({ method: 'GET', url: `/v1/calls/${call.id}`, headers: acme.auth })).body);
  t.same(detail.transcript, { available: true, source: 'provider' });
  const transcript = JSON.parse((await h.request({ method: 'GET', url: `/v1/calls/${call.id}/transcript`, headers: acme.auth })).body);
  t.same(transcript, {
    call_id: call.id, source: 'provider',
    turns: [
      { role: 'agent', text: 'Hello, how can I help?', offset_s: 0 },
      { role: 'caller', text: 'I would like to book a table.', offset_s: 3 },
      { role: 'agent', text: 'Done, see you at eight.', offset_s: 9.5 },
    ],
  });
  const audit = sqliteOf(h.store).prepare('SELECT * FROM webhook_deliveries').all() as Record<string, unknown>[];
  t.equal(audit.length, 1);
  t.match(audit[0], { provider: 'elevenlabs', event: 'post_call_transcription', tenant_id: acme.tenant.id, call_id: call.id, conversation_id: 'conv_0501k5xyz' });
  t.equal(audit[0]!.payload_json, JSON.stringify(transcription()), 'the raw body is kept as received');
  t.match(audit[0]!.body_sha256, /^[0-9a-f]{64}$/);
  t.equal((await h.store.calls.get(acme.tenant.id, call.id))?.conversation_id, 'conv_0501k5xyz', 'the conversation id is recorded on the call');

  t.equal(await statusOf(h, 'elevenlabs', transcription()), 'duplicate', 'a repeated delivery');
  t.equal(count(h, 'webhook_deliveries'), 1, 'stored once');
});

t.test('docs/WEBHOOKS.md "Post-call webhooks": payloads that do not attribute are ignored and store nothing', async (t) => {
  const cases: [string, (h: AppHarness) => Promise<{ payload: unknown; callId: string }>][] = [
    ['DID never routed', async (h) => ({ callId: (await seed(h)).call.id, payload: transcription({ agentNumber: '+14155550777' }) })],
    ['agent id mismatch', async (h) => ({ callId: (await seed(h)).call.id, payload: transcription({ agentId: 'agent_someone_else' }) })],
    ['agent of another provider', async (h) => ({ callId: (await seed(h, { provider: 'retell' })).call.id, payload: transcription() })],
    ['call ended before the window', async (h) => ({ callId: (await seed(h, { endedAgoMs: 121 * 60_000 })).call.id, payload: transcription() })],
    ['no matching remote number', async (h) => ({ callId: (await seed(h)).call.id, payload: transcription({ externalNumber: '+14155550123' }) })],
    ['call still live', async (h) => ({ callId: (await seed(h, { call: { state: 'active', ended_at: null } })).call.id, payload: transcription() })],
    ["another tenant's call on that DID", async (h) => {
      const { call } = await seed(h);
      // Mallory's agent has the same external id at the same provider, but the DID is routed only for Acme.
      const mallory = await h.createTenant('Mallory');
      await h.store.agents.insert(mallory.tenant.id, { provider: 'elevenlabs', external_agent_id: EL_AGENT, settings: SETTINGS, apiKey: null, verifiedAt: null });
      sqliteOf(h.store).prepare('UPDATE calls SET tenant_id = ? WHERE id = ?').run(mallory.tenant.id, call.id);
      return { callId: call.id, payload: transcription() };
    }],
    ['route created after the call started', async (h) => {
      const { call, routeId } = await seed(h);
      sqliteOf(h.store).prepare('UPDATE routes SET created_at = ? WHERE id = ?').run(isoTime(h.clock.now() - 30_000), routeId);
      return { callId: call.id, payload: transcription() };
    }],
    ['no numbers and an unknown conversation id', async (h) => ({
      callId: (await seed(h)).call.id,
      payload: { type: 'post_call_audio', data: { agent_id: EL_AGENT, conversation_id: 'conv_unknown', full_audio: Buffer.alloc(64, 7).toString('base64') } },
    })],
  ];
  for (const [name, build] of cases) {
    await t.test(name, async (t) => {
      const h = await buildApp(t);
      const { payload, callId } = await build(h);
      t.equal(await statusOf(h, 'elevenlabs', payload), 'ignored');
      assertNothingStored(t, h, callId);
    });
  }
});

t.test('docs/WEBHOOKS.md "Post-call webhooks": a route deleted after the call still attributes; one deleted before it does not', async (t) => {
  const h = await buildApp(t);
  const { acme, routeId } = await seed(h);
  t.ok(await h.store.routes.delete(acme.tenant.id, routeId), 'route deleted now, after the call');
  t.equal(await statusOf(h, 'elevenlabs', transcription()), 'accepted');

  const h2 = await buildApp(t);
  const { call, routeId: r2 } = await seed(h2);
  sqliteOf(h2.store).prepare('UPDATE routes SET deleted_at = ? WHERE id = ?').run(isoTime(Date.parse(call.created_at) - 1000), r2);
  t.equal(await statusOf(h2, 'elevenlabs', transcription()), 'ignored');
});

t.test('docs/WEBHOOKS.md "Post-call webhooks": post_call_audio attributes through the conversation id; inline MP3 archived and served', async (t) => {
  const h = await buildApp(t);
  const { acme, call } = await seed(h);
  t.equal(await statusOf(h, 'elevenlabs', transcription()), 'accepted');
  const mp3 = Buffer.concat([Buffer.from('ID3\x04\x00\x00', 'latin1'), Buffer.alloc(6000, 0xfb)]);
  const audio = { type: 'post_call_audio', event_timestamp: 1739537300, data: { agent_id: EL_AGENT, conversation_id: 'conv_0501k5xyz', full_audio: mp3.toString('base64') } };
  t.equal(await statusOf(h, 'elevenlabs', audio), 'accepted');
  t.equal(await statusOf(h, 'elevenlabs', audio), 'duplicate');

  const detail = JSON.parse((await h.request({ method: 'GET', url: `/v1/calls/${call.id}`, headers: acme.auth })).body);
  t.same(detail.recording, { available: true });
  const res = await h.request({ method: 'GET', url: `/v1/calls/${call.id}/recording`, headers: acme.auth });
  t.equal(res.statusCode, 200);
  t.equal(res.headers['content-type'], 'audio/mpeg');
  t.equal(res.headers['content-length'], String(mp3.length));
  t.ok(res.rawPayload.equals(mp3), 'the archived bytes are the decoded audio');
  const row = await h.store.recordings.get(acme.tenant.id, call.id, 'provider');
  t.match(row, { media_type: 'audio/mpeg', bytes: mp3.length, origin: 'inline', path: `${acme.tenant.id}/${call.id}.provider.mp3` });
  const audit = sqliteOf(h.store).prepare("SELECT payload_json FROM webhook_deliveries WHERE event = 'post_call_audio'").pluck().get() as string;
  t.notOk(audit.includes(mp3.toString('base64').slice(0, 200)), 'the audit row does not duplicate the audio');
  t.match(audit, new RegExp(`sha256 ${row!.sha256}`), 'it names the archived recording instead');

  const other = await h.createTenant('Other');
  t.equal((await h.request({ method: 'GET', url: `/v1/calls/${call.id}/recording`, headers: other.auth })).statusCode, 404, "another tenant's call is not found");
});

t.test('docs/WEBHOOKS.md "Post-call webhooks": a conversation id the gateway saw on a media_bridge call attributes', async (t) => {
  const h = await buildApp(t);
  const { acme, call } = await seed(h, { call: { conversation_id: 'conv_bridge_1', agent_type: 'imported' } });
  const mp3 = Buffer.alloc(100, 0xfb);
  const audio = { type: 'post_call_audio', data: { agent_id: EL_AGENT, conversation_id: 'conv_bridge_1', full_audio: mp3.toString('base64') } };
  t.equal(await statusOf(h, 'elevenlabs', audio), 'accepted');
  t.equal((await h.store.recordings.get(acme.tenant.id, call.id, 'provider'))?.bytes, 100);
  t.equal(await statusOf(h, 'retell', { event: 'call_ended', call: { call_id: 'conv_bridge_1', agent_id: 'x', direction: 'inbound' } }), 'ignored',
    'the same id from another provider does not attribute');
});

t.test('docs/WEBHOOKS.md "Post-call webhooks": several matching calls → the one whose end is closest to the payload end time', async (t) => {
  const h = await buildApp(t);
  const { acme, call: older } = await seed(h, { endedAgoMs: 50 * 60_000 });
  const now = h.clock.now();
  const newer = callRecord(acme.tenant.id, isoTime(now - 5 * 60_000), {
    direction: 'inbound', state: 'ended', from_number: CALLER, to_number: DID, ended_at: isoTime(now - 4 * 60_000), end_reason: 'completed',
  });
  await h.store.calls.insert(newer);
  const olderStartS = Math.round((Date.parse(older.ended_at!) - 42_000) / 1000);
  t.equal(await statusOf(h, 'elevenlabs', transcription({ startS: olderStartS })), 'accepted');
  t.same(await h.store.transcripts.sources(acme.tenant.id, older.id), ['provider'], 'the call ending at the payload end time');
  t.same(await h.store.transcripts.sources(acme.tenant.id, newer.id), []);
});

t.test('docs/WEBHOOKS.md "Post-call webhooks": Retell and Vapi payloads attribute by DID; missing agent id needs an agent of that provider', async (t) => {
  const h = await buildApp(t);
  const retell = await seed(h, { provider: 'retell', externalAgentId: 'oBeDLoLOeuAbiuaMFXRtDOLriTJ5tSxD' });
  const endMs = Date.parse(retell.call.ended_at!);
  const retellBody = {
    event: 'call_analyzed',
    call: {
      call_id: 'Jabr9TXYYJHfvl6Syypi88rdAHYHmcq6', agent_id: 'oBeDLoLOeuAbiuaMFXRtDOLriTJ5tSxD', direction: 'inbound', from_number: CALLER,
      to_number: DID, start_timestamp: endMs - 21_522, end_timestamp: endMs,
      transcript_object: [{ role: 'agent', content: 'hi how are you doing?', words: [{ word: 'hi', start: 0.7, end: 1.3 }] }],
    },
  };
  t.equal(await statusOf(h, 'retell', retellBody), 'accepted');
  t.equal(await statusOf(h, 'retell', { ...retellBody, event: 'call_ended' }), 'accepted', 'another event of the same call is not a duplicate');
  t.equal(await statusOf(h, 'retell', retellBody), 'duplicate');

  const h2 = await buildApp(t);
  const vapi = await seed(h2, { provider: 'vapi', externalAgentId: 'asst_1' });
  const vapiBody = (assistantId: string | null) => ({
    message: {
      type: 'end-of-call-report', call: { id: 'vapi-call-1', type: 'inboundPhoneCall', customer: { number: CALLER } },
      phoneNumber: { number: DID }, ...(assistantId ? { assistant: { id: assistantId } } : {}),
      artifact: { messages: [{ role: 'user', message: 'Hello?', secondsFromStart: 0.5 }] },
    },
  });
  t.equal(await statusOf(h2, 'vapi', vapiBody('asst_other')), 'ignored', 'a different assistant');
  t.equal(await statusOf(h2, 'vapi', vapiBody(null)), 'accepted', 'no assistant id: the route agent is a Vapi agent');
  t.same(await h2.store.transcripts.get(vapi.acme.tenant.id, vapi.call.id, 'provider'), [{ role: 'caller', text: 'Hello?', offset_s: 0.5 }]);
});

t.test('docs/WEBHOOKS.md "Post-call webhooks": outbound calls attribute on their from number; a known conversation id with another agent does not', async (t) => {
  const h = await buildApp(t);
  const { call } = await seed(h, { call: { direction: 'outbound', from_number: DID, to_number: CALLER } });
  const outbound = transcription();
  outbound.data.metadata.phone_call.direction = 'outbound';
  t.equal(await statusOf(h, 'elevenlabs', { ...outbound, data: { ...outbound.data, conversation_id: 'conv_in' } }), 'accepted');
  t.equal(sqliteOf(h.store).prepare('SELECT conversation_id FROM calls WHERE id = ?').pluck().get(call.id), 'conv_in');
  const audio = (agentId: string) => ({ type: 'post_call_audio', data: { agent_id: agentId, conversation_id: 'conv_in', full_audio: Buffer.alloc(64, 1).toString('base64') } });
  t.equal(await statusOf(h, 'elevenlabs', audio('agent_intruder')), 'ignored', 'same conversation id, another agent');
  t.equal(await statusOf(h, 'elevenlabs', audio(EL_AGENT)), 'accepted');
});
