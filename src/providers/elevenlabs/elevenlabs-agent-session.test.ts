import t, { type Test } from 'tap';
import { ProviderError } from '../agent-session.js';
import { agentSessionContract, openFor, type AgentSessionSubject } from '../agent-session-contract.js';
import { FakeElevenLabs, type FakeElevenLabsOptions } from '../../../test/support/fake-agent-servers/elevenlabs-server.js';
import { openElevenLabsAgentSession } from './elevenlabs-agent-session.js';

const KEY = 'xi_test_key_4Hq8Zp2Lm6Rt0Vw3';

const subject: AgentSessionSubject = {
  provider: 'elevenlabs',
  open: openElevenLabsAgentSession,
  startFake: (apiKey) => FakeElevenLabs.start({ apiKey }),
  usesKey: true,
};

t.test('AgentSession contract', (t) => {
  agentSessionContract(t, subject);
  t.end();
});

async function started(t: Test, options: FakeElevenLabsOptions = { apiKey: KEY }) {
  const fake = await FakeElevenLabs.start(options);
  t.teardown(() => fake.core.close());
  const { session, recorder } = openFor(t, subject, fake, { apiKey: options.apiKey });
  await session.start();
  return { fake, session, recorder };
}

t.test('ElevenLabs signed URL: the key goes only in xi-api-key to get-signed-url, and the socket uses the signed URL', async (t) => {
  const { fake } = await started(t);
  const [signed, upgrade] = fake.core.http;
  t.match(signed, { method: 'GET', path: `/v1/convai/conversation/get-signed-url?agent_id=${fake.externalAgentId}` });
  t.equal(signed?.headers['xi-api-key'], KEY);
  t.match(upgrade?.path, /conversation_signature=/, 'connected to the signed URL');
  t.notOk(JSON.stringify(upgrade?.headers).includes(KEY), 'no key on the WebSocket upgrade');
});

t.test('ElevenLabs signed URL: the signed URL token never reaches the log callback', async (t) => {
  const { recorder, session } = await started(t);
  session.close('done');
  t.ok(recorder.logs.length > 0);
  t.notOk(recorder.logs.some((l) => l.includes('conversation_signature') || l.includes('sig-0123456789')));
});

t.test('ElevenLabs public agent: no key means the documented URL, with no HTTP step', async (t) => {
  const { fake } = await started(t, {});
  t.equal(fake.core.http.length, 1);
  t.equal(fake.core.http[0]?.path, `/v1/convai/conversation?agent_id=${fake.externalAgentId}`);
});

t.test('ElevenLabs: conversation_initiation_client_data is the first message', async (t) => {
  const { fake } = await started(t);
  t.equal(fake.core.jsonMessages()[0]?.type, 'conversation_initiation_client_data');
});

t.test('ElevenLabs: user_audio_chunk carries base64 audio and no type field', async (t) => {
  const { fake, session } = await started(t);
  session.sendAudio(Buffer.alloc(160, 0x55));
  await fake.core.until(() => fake.receivedAudio().length > 0);
  const chunk = fake.core.jsonMessages().find((m) => 'user_audio_chunk' in m);
  t.same(Object.keys(chunk ?? {}), ['user_audio_chunk']);
});

t.test('ElevenLabs formats: pcm_16000 declared by the agent becomes pcm16 16 kHz both ways', async (t) => {
  const { session } = await started(t, { apiKey: KEY, userInputAudioFormat: 'pcm_16000', agentOutputAudioFormat: 'pcm_16000' });
  t.same(session.inputFormat, { encoding: 'pcm16', sampleRate: 16000 });
  t.same(session.outputFormat, { encoding: 'pcm16', sampleRate: 16000 });
});

t.test('ElevenLabs formats: ulaw_8000 in and pcm_24000 out are declared separately', async (t) => {
  const { session } = await started(t, { apiKey: KEY, userInputAudioFormat: 'ulaw_8000', agentOutputAudioFormat: 'pcm_24000' });
  t.same(session.inputFormat, { encoding: 'mulaw', sampleRate: 8000 });
  t.same(session.outputFormat, { encoding: 'pcm16', sampleRate: 24000 });
});

t.test('ElevenLabs formats: an unknown format rejects start as protocol', async (t) => {
  const fake = await FakeElevenLabs.start({ apiKey: KEY, agentOutputAudioFormat: 'mp3_44100' });
  t.teardown(() => fake.core.close());
  const { session } = openFor(t, subject, fake, { apiKey: KEY });
  const error = await session.start().then(() => undefined, (e: unknown) => e);
  t.ok(error instanceof ProviderError && error.kind === 'protocol');
});

t.test('ElevenLabs interruption: audio with an event id at or below the interruption is dropped, later turns play', async (t) => {
  const { fake, recorder } = await started(t);
  fake.sendAudio(Buffer.alloc(160, 1));
  fake.interrupt();
  const interrupted = fake.lastEventId;
  fake.sendAudio(Buffer.alloc(160, 2), interrupted);
  fake.sendAudio(Buffer.alloc(160, 3), interrupted - 1);
  fake.sendAudio(Buffer.alloc(160, 4));
  await recorder.until(() => recorder.audio.length >= 2);
  t.equal(recorder.clears, 1);
  t.same(recorder.audio.map((a) => a[0]), [1, 4], 'late audio of the interrupted turn ignored');
});

t.test('ElevenLabs ping: answered with a pong carrying the ping event id', async (t) => {
  const { fake } = await started(t);
  const id = fake.ping();
  await fake.core.until(() => fake.core.jsonMessages().some((m) => m.type === 'pong'));
  t.same(fake.core.jsonMessages().find((m) => m.type === 'pong'), { type: 'pong', event_id: id });
});

t.test('ElevenLabs close codes: 1008 from the platform is an error, not the agent hanging up', async (t) => {
  const { fake, recorder } = await started(t);
  fake.core.closeSocket(1008, 'policy');
  await recorder.until(() => recorder.closes.length > 0);
  t.same(recorder.closes, [{ by: 'error', code: 1008, reason: 'policy' }]);
});

t.test('ElevenLabs signed URL: a refused key rejects start with the status and no key in the message', async (t) => {
  const fake = await FakeElevenLabs.start({ apiKey: KEY });
  t.teardown(() => fake.core.close());
  const { session } = openFor(t, subject, fake, { apiKey: 'xi_other_key_0000' });
  const error = await session.start().then(() => undefined, (e: unknown) => e);
  t.ok(error instanceof ProviderError);
  t.match(error, { kind: 'rejected', status: 401 });
  t.notMatch(String((error as Error).message), /xi_other_key/);
});

t.test('ElevenLabs: tentative_user_transcript is a caller partial, user_transcript the final', async (t) => {
  const { fake, recorder } = await started(t);
  fake.core.send({ type: 'tentative_user_transcript', tentative_user_transcription_event: { user_transcript: 'I ne', event_id: 1 } });
  fake.sendTranscript('caller', 'I need help');
  await recorder.until(() => recorder.transcripts.length === 2);
  t.same(recorder.transcripts, [
    { role: 'caller', text: 'I ne', final: false },
    { role: 'caller', text: 'I need help', final: true },
  ]);
});
