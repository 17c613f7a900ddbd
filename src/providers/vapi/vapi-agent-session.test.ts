import t, { type Test } from 'tap';
import { systemClock } from '../../common/clock.js';
import { PCM16_16000, type AgentSessionOptions } from '../agent-session.js';
import { SessionRecorder, agentSessionContract, openFor, type AgentSessionSubject } from '../agent-session-contract.js';
import { FakeVapi } from '../../../test/support/fake-agent-servers/vapi-server.js';
import { openVapiAgentSession } from './vapi-agent-session.js';

const KEY = 'vapi-private-0f1e2d3c-4b5a-6978';

const subject: AgentSessionSubject = {
  provider: 'vapi',
  open: openVapiAgentSession,
  startFake: (apiKey) => FakeVapi.start(apiKey),
  usesKey: true,
};

t.test('AgentSession contract', (t) => {
  agentSessionContract(t, subject);
  t.end();
});

async function started(t: Test) {
  const fake = await FakeVapi.start(KEY);
  t.teardown(() => fake.core.close());
  const { session, recorder } = openFor(t, subject, fake, { apiKey: KEY });
  await session.start();
  return { fake, session, recorder };
}

t.test('Vapi WebSocket transport: POST /call with the assistant and a vapi.websocket mulaw 8000 transport, Bearer key', async (t) => {
  const { fake } = await started(t);
  const create = fake.core.http[0];
  t.match(create, { method: 'POST', path: '/call' });
  t.equal(create?.headers.authorization, `Bearer ${KEY}`);
  t.same(fake.createBody, {
    assistantId: fake.externalAgentId,
    transport: { provider: 'vapi.websocket', audioFormat: { format: 'mulaw', container: 'raw', sampleRate: 8000 } },
  });
  t.equal(fake.core.http[1]?.path, `/${fake.conversationId}/transport`, 'connected to websocketCallUrl');
  t.notOk(JSON.stringify(fake.core.http[1]?.headers).includes(KEY), 'no key on the socket');
});

t.test('Vapi WebSocket transport: a pcm16 16 kHz preference asks for pcm_s16le 16000', async (t) => {
  const fake = await FakeVapi.start(KEY);
  t.teardown(() => fake.core.close());
  const recorder = new SessionRecorder();
  const options: AgentSessionOptions = {
    call: { callId: 'call_1', callControlId: 'v3:1', from: '+1', to: '+2', direction: 'outbound' },
    endpoint: { url: fake.url, externalAgentId: fake.externalAgentId },
    apiKey: KEY, preferredFormat: PCM16_16000, clock: systemClock, connectTimeoutMs: 3000, handlers: recorder.handlers,
  };
  const session = openVapiAgentSession(options);
  t.teardown(() => session.close('over'));
  await session.start();
  t.same(session.inputFormat, PCM16_16000);
  t.match(fake.createBody, { transport: { audioFormat: { format: 'pcm_s16le', container: 'raw', sampleRate: 16000 } } });
});

t.test('Vapi WebSocket transport: caller audio goes as raw binary frames', async (t) => {
  const { fake, session } = await started(t);
  session.sendAudio(Buffer.alloc(160, 0x42));
  await fake.core.until(() => fake.core.frames.length > 0);
  t.match(fake.core.frames[0], { kind: 'binary' });
});

t.test('Vapi: speech-update with the user starting is barge-in; the assistant starting is not', async (t) => {
  const { fake, recorder } = await started(t);
  fake.sendSpeechUpdate('assistant', 'started');
  fake.sendSpeechUpdate('user', 'started');
  await recorder.until(() => recorder.clears > 0);
  fake.sendTranscript('agent', 'marker');
  await recorder.until(() => recorder.transcripts.length > 0);
  t.equal(recorder.clears, 1);
});

t.test('Vapi: partial transcripts surface as not final', async (t) => {
  const { fake, recorder } = await started(t);
  fake.sendTranscript('caller', 'I need', false);
  await recorder.until(() => recorder.transcripts.length > 0);
  t.same(recorder.transcripts, [{ role: 'caller', text: 'I need', final: false }]);
});

t.test('Vapi: the gateway ending the call sends end-call before closing', async (t) => {
  const { fake, session } = await started(t);
  session.close('caller hung up');
  await fake.core.until(() => fake.core.closedWith !== undefined);
  t.same(fake.core.jsonMessages(), [{ type: 'end-call' }]);
});

t.test('Vapi: an unknown assistant rejects start as rejected with the status', async (t) => {
  const fake = await FakeVapi.start(KEY);
  t.teardown(() => fake.core.close());
  const { session } = openFor(t, subject, fake, { apiKey: KEY, externalAgentId: 'not-an-assistant' });
  const error = await session.start().then(() => undefined, (e: unknown) => e);
  t.match(error, { name: 'ProviderError', kind: 'rejected', status: 400 });
});
