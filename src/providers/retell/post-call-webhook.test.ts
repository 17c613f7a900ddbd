import t from 'tap';
import { parseRetellWebhook } from './post-call-webhook.js';

/** A `PhoneCallResponse` as the Retell SDK documents it. */
function call(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    call_id: 'Jabr9TXYYJHfvl6Syypi88rdAHYHmcq6',
    call_type: 'phone_call',
    agent_id: 'oBeDLoLOeuAbiuaMFXRtDOLriTJ5tSxD',
    agent_version: 3,
    call_status: 'ended',
    direction: 'inbound',
    from_number: '+12137771234',
    to_number: '+12137771235',
    start_timestamp: 1703302407333,
    end_timestamp: 1703302428855,
    duration_ms: 21522,
    disconnection_reason: 'user_hangup',
    transcript: 'Agent: hi how are you doing?\nUser: Doing pretty well. How are you?\n',
    transcript_object: [
      { role: 'agent', content: 'hi how are you doing?', words: [{ word: 'hi', start: 0.7, end: 1.3 }] },
      { role: 'user', content: 'Doing pretty well. How are you?', words: [{ word: 'Doing', start: 1.9, end: 2.1 }] },
      { role: 'transfer_target', content: 'Sales, this is Sam.', words: [] },
      { role: 'agent', content: 'Great.' },
    ],
    recording_url: 'https://dxc03zgurdly9.cloudfront.net/a1b2/recording.wav',
    recording_multi_channel_url: 'https://dxc03zgurdly9.cloudfront.net/a1b2/recording_multichannel.wav',
    metadata: {},
    telephony_identifier: { twilio_call_sid: 'CA123' },
    ...over,
  };
}

t.test('Retell call_ended inbound: agent number is to_number, turns from transcript_object, ms timestamps', (t) => {
  const body = { event: 'call_ended', call: call() };
  const r = parseRetellWebhook(body);
  if (r.kind !== 'post_call') return t.fail(r.kind);
  t.equal(r.provider, 'retell');
  t.equal(r.event, 'call_ended');
  t.equal(r.conversationId, 'Jabr9TXYYJHfvl6Syypi88rdAHYHmcq6');
  t.equal(r.agentId, 'oBeDLoLOeuAbiuaMFXRtDOLriTJ5tSxD');
  t.equal(r.direction, 'inbound');
  t.equal(r.agentNumber, '+12137771235');
  t.equal(r.remoteNumber, '+12137771234');
  t.equal(r.startedAt, 1703302407333);
  t.equal(r.endedAt, 1703302428855);
  t.same(r.turns, [
    { role: 'agent', text: 'hi how are you doing?', offsetS: 0.7 },
    { role: 'caller', text: 'Doing pretty well. How are you?', offsetS: 1.9 },
    { role: 'agent', text: 'Great.', offsetS: null },
  ], 'a transfer target is neither caller nor agent and stays in the raw payload only');
  t.same(r.recording, { url: 'https://dxc03zgurdly9.cloudfront.net/a1b2/recording.wav', mediaType: 'audio/wav' });
  t.equal(r.raw, body);
  t.end();
});

t.test('Retell call_analyzed outbound: agent number is from_number', (t) => {
  const r = parseRetellWebhook({ event: 'call_analyzed', call: call({ direction: 'outbound', call_analysis: { call_summary: 'ok' } }) });
  if (r.kind !== 'post_call') return t.fail(r.kind);
  t.equal(r.event, 'call_analyzed');
  t.equal(r.agentNumber, '+12137771234');
  t.equal(r.remoteNumber, '+12137771235');
  t.end();
});

t.test('Retell: without a direction (web call) no side is named', (t) => {
  const r = parseRetellWebhook({ event: 'call_ended', call: call({ call_type: 'web_call', direction: undefined, from_number: undefined, to_number: undefined, recording_url: null }) });
  if (r.kind !== 'post_call') return t.fail(r.kind);
  t.equal(r.agentNumber, null);
  t.equal(r.remoteNumber, null);
  t.equal(r.recording, null);
  t.end();
});

t.test('Retell: other events ignored, wrong shapes invalid', (t) => {
  for (const event of ['call_started', 'transcript_updated', 'transfer_started']) {
    t.equal(parseRetellWebhook({ event, call: call() }).kind, 'ignored', event);
  }
  t.equal(parseRetellWebhook({ event: 'call_ended' }).kind, 'invalid', 'no call');
  t.equal(parseRetellWebhook({ event: 'call_ended', call: [] }).kind, 'invalid', 'call is an array');
  t.equal(parseRetellWebhook({ event: 'call_ended', call: call({ call_id: {} }) }).kind, 'invalid', 'call_id of the wrong type');
  t.equal(parseRetellWebhook({ call: call() }).kind, 'invalid', 'no event');
  t.equal(parseRetellWebhook('call_ended').kind, 'invalid');
  t.end();
});

t.test('Retell: wrong field types read as absent, never throw', (t) => {
  const r = parseRetellWebhook({ event: 'call_ended', call: call({ transcript_object: 'x', start_timestamp: 'soon', recording_url: 'file:///etc/passwd', agent_id: 5 }) });
  if (r.kind !== 'post_call') return t.fail(r.kind);
  t.same(r.turns, []);
  t.equal(r.startedAt, null);
  t.equal(r.recording, null, 'only http(s) URLs are passed on to the downloader');
  t.equal(r.agentId, '5', 'a numeric id is read as its decimal string');
  t.end();
});
