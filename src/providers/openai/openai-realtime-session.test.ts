import t, { type Test } from 'tap';
import { FakeClock } from '../../common/clock.js';
import { ProviderError } from '../agent-session.js';
import { agentSessionContract, openFor, type AgentSessionSubject } from '../agent-session-contract.js';
import { FakeOpenAiRealtime } from '../../../test/support/fake-agent-servers/openai-realtime-server.js';
import { openOpenAiRealtimeSession } from './openai-realtime-session.js';

const KEY = 'sk-proj-test_7Yh2Kq9Lm4Nb6Vc1';

const subject: AgentSessionSubject = {
  provider: 'openai',
  open: openOpenAiRealtimeSession,
  startFake: (apiKey) => FakeOpenAiRealtime.start({ apiKey }),
  usesKey: true,
};

t.test('AgentSession contract', (t) => {
  agentSessionContract(t, subject);
  t.end();
});

t.test('AgentSession contract, beta event names', (t) => {
  agentSessionContract(t, { ...subject, startFake: (apiKey) => FakeOpenAiRealtime.start({ apiKey, beta: true }) });
  t.end();
});

async function started(t: Test, clock = new FakeClock()) {
  const fake = await FakeOpenAiRealtime.start({ apiKey: KEY });
  t.teardown(() => fake.core.close());
  const { session, recorder } = openFor(t, subject, fake, { apiKey: KEY, clock });
  await session.start();
  return { fake, session, recorder, clock };
}

t.test('OpenAI Realtime: Bearer key on the upgrade, model in the query', async (t) => {
  const { fake } = await started(t);
  const upgrade = fake.core.http[0];
  t.equal(upgrade?.path, '/v1/realtime?model=gpt-realtime');
  t.equal(upgrade?.headers.authorization, `Bearer ${KEY}`);
});

t.test('OpenAI Realtime GA: session.update asks for audio/pcmu both ways and server VAD that interrupts', async (t) => {
  const { fake } = await started(t);
  t.match(fake.sessionUpdate(), {
    type: 'realtime',
    audio: {
      input: { format: { type: 'audio/pcmu' }, turn_detection: { type: 'server_vad', interrupt_response: true, create_response: true } },
      output: { format: { type: 'audio/pcmu' } },
    },
  });
});

t.test('OpenAI Realtime: caller audio goes as input_audio_buffer.append', async (t) => {
  const { fake, session } = await started(t);
  session.sendAudio(Buffer.alloc(160, 0x12));
  await fake.core.until(() => fake.messagesOf('input_audio_buffer.append').length === 1);
  t.same(fake.messagesOf('input_audio_buffer.append')[0], { type: 'input_audio_buffer.append', audio: Buffer.alloc(160, 0x12).toString('base64') });
});

t.test('OpenAI Realtime barge-in: speech_started clears playout and truncates the item at the ms the gateway played', async (t) => {
  const { fake, session, recorder } = await started(t);
  const item = fake.itemId;
  for (let i = 0; i < 5; i++) fake.sendAudio(Buffer.alloc(160, i)); // 5 x 20 ms of µ-law
  await recorder.until(() => recorder.marks.length === 5);
  session.markPlayed(recorder.marks[1]!); // 40 ms have played
  fake.interrupt();
  await fake.core.until(() => fake.messagesOf('conversation.item.truncate').length === 1);
  t.equal(recorder.clears, 1);
  t.same(fake.messagesOf('conversation.item.truncate')[0], { type: 'conversation.item.truncate', item_id: item, content_index: 0, audio_end_ms: 40 });
});

t.test('OpenAI Realtime barge-in without mark echoes: truncates at the time since the first delta, at most what was delivered', async (t) => {
  const { fake, recorder, clock } = await started(t);
  for (let i = 0; i < 3; i++) fake.sendAudio(Buffer.alloc(160, i));
  await recorder.until(() => recorder.audio.length === 3);
  clock.advance(25);
  fake.interrupt();
  await fake.core.until(() => fake.messagesOf('conversation.item.truncate').length === 1);
  t.match(fake.messagesOf('conversation.item.truncate')[0], { audio_end_ms: 25 });
  clock.advance(1000);
  fake.sendAudio(Buffer.alloc(160, 9));
  await recorder.until(() => recorder.audio.length === 4);
  fake.interrupt();
  await fake.core.until(() => fake.messagesOf('conversation.item.truncate').length === 2);
  t.match(fake.messagesOf('conversation.item.truncate')[1], { audio_end_ms: 0 }, 'the new item started at the current time');
});

t.test('OpenAI Realtime barge-in while nothing plays: clear only, no truncate', async (t) => {
  const { fake, session, recorder } = await started(t);
  fake.interrupt();
  await recorder.until(() => recorder.clears === 1);
  session.sendAudio(Buffer.alloc(160));
  await fake.core.until(() => fake.messagesOf('input_audio_buffer.append').length === 1);
  t.same(fake.messagesOf('conversation.item.truncate'), []);
});

t.test('OpenAI Realtime: a refused key rejects start with the upgrade status', async (t) => {
  const fake = await FakeOpenAiRealtime.start({ apiKey: KEY });
  t.teardown(() => fake.core.close());
  const { session } = openFor(t, subject, fake, { apiKey: 'sk-other' });
  const error = await session.start().then(() => undefined, (e: unknown) => e);
  t.match(error, { kind: 'rejected', status: 401 });
  t.ok(error instanceof ProviderError);
});

t.test('OpenAI Realtime: without a key start rejects before any connection', async (t) => {
  const fake = await FakeOpenAiRealtime.start({ apiKey: KEY });
  t.teardown(() => fake.core.close());
  const { session } = openFor(t, subject, fake, { apiKey: undefined });
  const error = await session.start().then(() => undefined, (e: unknown) => e);
  t.match(error, { kind: 'rejected' });
  t.equal(fake.core.http.length, 0);
});

t.test('OpenAI Realtime: a 503 on the upgrade rejects start as unreachable', async (t) => {
  const fake = await FakeOpenAiRealtime.start({ apiKey: KEY });
  t.teardown(() => fake.core.close());
  fake.core.checkUpgrade(() => 503);
  const { session } = openFor(t, subject, fake, { apiKey: KEY });
  const error = await session.start().then(() => undefined, (e: unknown) => e);
  t.match(error, { kind: 'unreachable', status: 503 });
});

t.test('OpenAI Realtime: an error event answering session.update rejects start as protocol', async (t) => {
  const fake = await FakeOpenAiRealtime.start({ apiKey: KEY });
  t.teardown(() => fake.core.close());
  fake.core.onFrame = () => fake.core.send({ type: 'error', event_id: 'event_e', error: { type: 'invalid_request_error', code: 'invalid_value', message: 'bad format' } });
  const { session, recorder } = openFor(t, subject, fake, { apiKey: KEY });
  const error = await session.start().then(() => undefined, (e: unknown) => e);
  t.match(error, { kind: 'protocol', message: /invalid_value/ });
  t.same(recorder.closes, []);
});

t.test('OpenAI Realtime: transcript deltas surface as partials of their role', async (t) => {
  const { fake, recorder } = await started(t);
  fake.core.send({ type: 'response.output_audio_transcript.delta', item_id: fake.itemId, delta: 'Hel' });
  fake.core.send({ type: 'conversation.item.input_audio_transcription.delta', item_id: 'item_user', delta: 'Hi' });
  await recorder.until(() => recorder.transcripts.length === 2);
  t.same(recorder.transcripts, [
    { role: 'agent', text: 'Hel', final: false },
    { role: 'caller', text: 'Hi', final: false },
  ]);
});
