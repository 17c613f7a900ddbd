import t from 'tap';
import { parseElevenLabsWebhook } from './post-call-webhook.js';

/** A `post_call_transcription` as documented: GET-conversation model under `data`. */
function transcription(phoneCall: Record<string, unknown>): Record<string, unknown> {
  return {
    type: 'post_call_transcription',
    event_timestamp: 1739537297,
    data: {
      agent_id: 'agent_7101k5abc',
      agent_name: 'Front desk',
      conversation_id: 'conv_0501k5xyz',
      status: 'done',
      user_id: null,
      transcript: [
        { role: 'agent', message: 'Hello, how can I help?', time_in_call_secs: 0, tool_calls: [], tool_results: [], feedback: null },
        { role: 'user', message: 'I would like to book a table.', time_in_call_secs: 3, interrupted: false },
        { role: 'agent', message: null, time_in_call_secs: 6, tool_calls: [{ tool_name: 'book' }] },
        { role: 'agent', message: 'Done, see you at eight.', time_in_call_secs: 9.5 },
      ],
      metadata: {
        start_time_unix_secs: 1739537200,
        accepted_time_unix_secs: 1739537201,
        call_duration_secs: 42,
        cost: 120,
        termination_reason: 'end_call tool',
        conversation_initiation_source: 'sip_trunk',
        phone_call: phoneCall,
      },
      analysis: { call_successful: 'success', transcript_summary: 'Booked.' },
      has_audio: true,
    },
  };
}

t.test('ElevenLabs post_call_transcription: numbers from sip_trunking phone_call, turns, times', (t) => {
  const body = transcription({
    type: 'sip_trunking', direction: 'inbound', phone_number_id: 'pn_1', agent_number: '+14155550100',
    external_number: '+14155550199', call_sid: 'SCL_abc',
  });
  const r = parseElevenLabsWebhook(body);
  if (r.kind !== 'post_call') return t.fail(`expected post_call, got ${r.kind}`);
  t.equal(r.provider, 'elevenlabs');
  t.equal(r.event, 'post_call_transcription');
  t.equal(r.conversationId, 'conv_0501k5xyz');
  t.equal(r.agentId, 'agent_7101k5abc');
  t.equal(r.agentNumber, '+14155550100');
  t.equal(r.remoteNumber, '+14155550199');
  t.equal(r.direction, 'inbound');
  t.equal(r.startedAt, 1739537200_000);
  t.equal(r.endedAt, 1739537242_000);
  t.same(r.turns, [
    { role: 'agent', text: 'Hello, how can I help?', offsetS: 0 },
    { role: 'caller', text: 'I would like to book a table.', offsetS: 3 },
    { role: 'agent', text: 'Done, see you at eight.', offsetS: 9.5 },
  ], 'tool-only turns without a message are left out');
  t.equal(r.recording, null);
  t.equal(r.raw, body, 'the raw payload is kept as received');
  t.end();
});

t.test('ElevenLabs post_call_transcription: twilio phone_call shape, outbound', (t) => {
  const r = parseElevenLabsWebhook(transcription({
    type: 'twilio', direction: 'outbound', phone_number_id: 'pn_2', agent_number: '+442079460000',
    external_number: '+442079460999', stream_sid: 'MZ1', call_sid: 'CA1',
  }));
  if (r.kind !== 'post_call') return t.fail(r.kind);
  t.equal(r.direction, 'outbound');
  t.equal(r.agentNumber, '+442079460000');
  t.equal(r.remoteNumber, '+442079460999');
  t.end();
});

t.test('ElevenLabs: a web conversation has no phone_call and so no numbers', (t) => {
  const body = transcription({});
  delete ((body.data as Record<string, unknown>).metadata as Record<string, unknown>).phone_call;
  const r = parseElevenLabsWebhook(body);
  if (r.kind !== 'post_call') return t.fail(r.kind);
  t.equal(r.agentNumber, null);
  t.equal(r.remoteNumber, null);
  t.equal(r.direction, null);
  t.end();
});

t.test('ElevenLabs: numbers that are not E.164 are no numbers', (t) => {
  const r = parseElevenLabsWebhook(transcription({ type: 'sip_trunking', direction: 'inbound', agent_number: 'sip:alice@x', external_number: 14155550199 }));
  if (r.kind !== 'post_call') return t.fail(r.kind);
  t.equal(r.agentNumber, null);
  t.equal(r.remoteNumber, null);
  t.end();
});

t.test('ElevenLabs post_call_audio: base64 MP3 decoded, only ids, no numbers', (t) => {
  const mp3 = Buffer.concat([Buffer.from('ID3\x04\x00\x00', 'latin1'), Buffer.alloc(300, 0xff)]);
  const r = parseElevenLabsWebhook({
    type: 'post_call_audio', event_timestamp: 1739537300,
    data: { agent_id: 'agent_7101k5abc', conversation_id: 'conv_0501k5xyz', full_audio: mp3.toString('base64') },
  });
  if (r.kind !== 'post_call') return t.fail(r.kind);
  t.equal(r.conversationId, 'conv_0501k5xyz');
  t.equal(r.agentNumber, null);
  t.equal(r.remoteNumber, null);
  t.same(r.turns, []);
  t.equal(r.recording?.mediaType, 'audio/mpeg');
  t.ok(r.recording?.inline?.equals(mp3), 'the inline bytes are the decoded audio');
  t.end();
});

t.test('ElevenLabs post_call_audio: audio that is not base64 is invalid, not garbage bytes', (t) => {
  for (const full_audio of ['not base64!', '', 42, null, ['AAAA']]) {
    const r = parseElevenLabsWebhook({ type: 'post_call_audio', data: { agent_id: 'a', conversation_id: 'c', full_audio } });
    t.equal(r.kind, 'invalid', JSON.stringify(full_audio));
  }
  t.end();
});

t.test('ElevenLabs call_initiation_failure: SIP and Twilio bodies, failure reason', (t) => {
  const sip = parseElevenLabsWebhook({
    type: 'call_initiation_failure', event_timestamp: 1739537400,
    data: {
      agent_id: 'agent_1', conversation_id: 'conv_f1', failure_reason: 'busy',
      metadata: { type: 'sip', body: { from_number: '+14155550100', to_number: '+14155550123', sip_status_code: 486, error_reason: 'Busy Here', call_sid: 'x' } },
    },
  });
  if (sip.kind !== 'post_call') return t.fail(sip.kind);
  t.equal(sip.failureReason, 'busy');
  t.equal(sip.agentNumber, '+14155550100');
  t.equal(sip.remoteNumber, '+14155550123');
  t.equal(sip.direction, 'outbound');
  const twilio = parseElevenLabsWebhook({
    type: 'call_initiation_failure',
    data: { agent_id: 'agent_1', conversation_id: 'conv_f2', failure_reason: 'no-answer', metadata: { type: 'twilio', body: { CallSid: 'CA1', CallStatus: 'no-answer', From: '+14155550100', To: '+14155550124' } } },
  });
  if (twilio.kind !== 'post_call') return t.fail(twilio.kind);
  t.equal(twilio.remoteNumber, '+14155550124');
  t.equal(twilio.failureReason, 'no-answer');
  t.end();
});

t.test('ElevenLabs: other event types are ignored, wrong shapes are invalid', (t) => {
  t.equal(parseElevenLabsWebhook({ type: 'post_call_something_new', data: {} }).kind, 'ignored');
  t.equal(parseElevenLabsWebhook({ type: 'post_call_transcription' }).kind, 'invalid', 'no data');
  t.equal(parseElevenLabsWebhook({ type: 'post_call_transcription', data: { agent_id: 'a' } }).kind, 'invalid', 'no conversation id');
  t.equal(parseElevenLabsWebhook({ type: 'post_call_transcription', data: { conversation_id: 'c' } }).kind, 'invalid', 'no agent id');
  t.equal(parseElevenLabsWebhook({ type: 'post_call_transcription', data: { conversation_id: 'c'.repeat(300), agent_id: 'a' } }).kind, 'invalid', 'over-long id');
  t.equal(parseElevenLabsWebhook({ type: 7 }).kind, 'invalid');
  t.equal(parseElevenLabsWebhook([]).kind, 'invalid');
  t.equal(parseElevenLabsWebhook(null).kind, 'invalid');
  t.end();
});
