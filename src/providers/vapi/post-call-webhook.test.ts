import t from 'tap';
import { parseVapiWebhook } from './post-call-webhook.js';

const CALL_ID = 'ea62d31a-7f92-4e02-a059-4d56d600bf51';
const ASSISTANT_ID = 'ab4f358c-94a5-4676-88a7-83b7c9888a4b';
const MONO = `https://storage.vapi.ai/${CALL_ID}-1750183823822-mono.wav`;

/** An `end-of-call-report` with the current `artifact` layout (openapi ServerMessageEndOfCallReport). */
function report(over: Record<string, unknown> = {}): { message: Record<string, unknown> } {
  return {
    message: {
      type: 'end-of-call-report',
      timestamp: 1750183824000,
      endedReason: 'customer-ended-call',
      startedAt: '2025-06-17T18:09:29.000Z',
      endedAt: '2025-06-17T18:10:22.000Z',
      call: { id: CALL_ID, orgId: 'org', type: 'inboundPhoneCall', assistantId: ASSISTANT_ID, phoneNumberId: 'pn', customer: { number: '+15195550100' } },
      customer: { number: '+15195550100' },
      phoneNumber: { id: 'pn', number: '+15195550199', provider: 'vapi' },
      assistant: { id: ASSISTANT_ID, name: 'Morgan' },
      analysis: { summary: 'Voicemail.', successEvaluation: 'false' },
      artifact: {
        recordingUrl: MONO,
        stereoRecordingUrl: `https://storage.vapi.ai/${CALL_ID}-stereo.wav`,
        recording: { stereoUrl: `https://storage.vapi.ai/${CALL_ID}-stereo.wav`, mono: { combinedUrl: MONO, assistantUrl: 'https://storage.vapi.ai/a.wav', customerUrl: 'https://storage.vapi.ai/c.wav' } },
        messages: [
          { role: 'system', time: 1750183770408, message: 'you are Morgan', secondsFromStart: 0 },
          { role: 'user', time: 1750183771497, endTime: 1750183774277, message: 'Your call has been forwarded to voice mail.', duration: 2700, secondsFromStart: 0.88 },
          { role: 'bot', time: 1750183774317, source: '', message: 'Hi. This is Morgan.', duration: 2820, secondsFromStart: 3.7 },
          { role: 'tool_calls', time: 1750183775000, toolCalls: [], secondsFromStart: 4 },
        ],
        transcript: 'User: Your call has been forwarded to voice mail.\nAI: Hi. This is Morgan.\n',
      },
      ...over,
    },
  };
}

t.test('Vapi end-of-call-report: artifact messages, numbers, assistant, mono recording', (t) => {
  const body = report();
  const r = parseVapiWebhook(body);
  if (r.kind !== 'post_call') return t.fail(r.kind);
  t.equal(r.provider, 'vapi');
  t.equal(r.conversationId, CALL_ID);
  t.equal(r.agentId, ASSISTANT_ID);
  t.equal(r.agentNumber, '+15195550199');
  t.equal(r.remoteNumber, '+15195550100');
  t.equal(r.direction, 'inbound');
  t.equal(r.startedAt, Date.parse('2025-06-17T18:09:29.000Z'));
  t.equal(r.endedAt, Date.parse('2025-06-17T18:10:22.000Z'));
  t.same(r.turns, [
    { role: 'caller', text: 'Your call has been forwarded to voice mail.', offsetS: 0.88 },
    { role: 'agent', text: 'Hi. This is Morgan.', offsetS: 3.7 },
  ], 'system prompt and tool calls are not turns');
  t.same(r.recording, { url: MONO, mediaType: 'audio/wav' });
  t.equal(r.raw, body);
  t.end();
});

t.test('Vapi older payload: top-level recordingUrl, messages and call fields', (t) => {
  const r = parseVapiWebhook({
    message: {
      type: 'end-of-call-report',
      call: { id: 'c-old', type: 'outboundPhoneCall', assistantId: 'asst-old', customer: { number: '+16135550101' }, startedAt: '2025-01-01T00:00:00Z', endedAt: '2025-01-01T00:01:00Z' },
      recordingUrl: 'https://storage.vapi.ai/c-old-mono.mp3',
      transcript: 'AI: Hello.\nUser: Bye.',
      messages: [{ role: 'assistant', content: 'Hello.', secondsFromStart: 0.5 }, { role: 'user', message: 'Bye.', secondsFromStart: 2 }],
    },
  });
  if (r.kind !== 'post_call') return t.fail(r.kind);
  t.equal(r.agentId, 'asst-old', 'call.assistantId when there is no assistant object');
  t.equal(r.remoteNumber, '+16135550101', 'call.customer.number when there is no customer object');
  t.equal(r.agentNumber, null, 'no phone number object: no agent number');
  t.equal(r.direction, 'outbound');
  t.equal(r.startedAt, Date.parse('2025-01-01T00:00:00Z'));
  t.same(r.turns, [{ role: 'agent', text: 'Hello.', offsetS: 0.5 }, { role: 'caller', text: 'Bye.', offsetS: 2 }]);
  t.same(r.recording, { url: 'https://storage.vapi.ai/c-old-mono.mp3', mediaType: 'audio/mpeg' });
  t.end();
});

t.test('Vapi: the plain transcript is read when there is no message list', (t) => {
  const r = parseVapiWebhook(report({ artifact: { transcript: 'User: Hi there\nAI: Hello!\nnoise line\n' } }));
  if (r.kind !== 'post_call') return t.fail(r.kind);
  t.same(r.turns, [{ role: 'caller', text: 'Hi there', offsetS: null }, { role: 'agent', text: 'Hello!', offsetS: null }]);
  t.equal(r.recording, null);
  t.end();
});

t.test('Vapi: other message types ignored, wrong shapes invalid', (t) => {
  for (const type of ['status-update', 'transcript', 'conversation-update', 'tool-calls']) {
    t.equal(parseVapiWebhook({ message: { type } }).kind, 'ignored', type);
  }
  t.equal(parseVapiWebhook({ message: { type: 'end-of-call-report' } }).kind, 'invalid', 'no call id');
  t.equal(parseVapiWebhook({ message: { type: 'end-of-call-report', call: { id: ['x'] } } }).kind, 'invalid');
  t.equal(parseVapiWebhook({ type: 'end-of-call-report' }).kind, 'invalid', 'no message envelope');
  t.equal(parseVapiWebhook({ message: 'end-of-call-report' }).kind, 'invalid');
  t.end();
});
