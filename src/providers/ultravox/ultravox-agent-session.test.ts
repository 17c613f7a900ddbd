import t, { type Test } from 'tap';
import { agentSessionContract, openFor, type AgentSessionSubject } from '../agent-session-contract.js';
import { FakeUltravox } from '../../../test/support/fake-agent-servers/ultravox-server.js';
import { openUltravoxAgentSession } from './ultravox-agent-session.js';

const KEY = 'uv_key_Qm3Xs8Df1Gh6Jk9L';

const subject: AgentSessionSubject = {
  provider: 'ultravox',
  open: openUltravoxAgentSession,
  startFake: (apiKey) => FakeUltravox.start(apiKey),
  usesKey: true,
};

t.test('AgentSession contract', (t) => {
  agentSessionContract(t, subject);
  t.end();
});

async function started(t: Test) {
  const fake = await FakeUltravox.start(KEY);
  t.teardown(() => fake.core.close());
  const { session, recorder } = openFor(t, subject, fake, { apiKey: KEY });
  await session.start();
  return { fake, session, recorder };
}

t.test('Ultravox serverWebSocket: call creation with X-API-Key asks for PCM at 8 kHz both ways', async (t) => {
  const { fake, session } = await started(t);
  t.equal(fake.core.http[0]?.headers['x-api-key'], KEY);
  t.match(fake.createBody, { medium: { serverWebSocket: { inputSampleRate: 8000, outputSampleRate: 8000 } } });
  t.same(session.inputFormat, { encoding: 'pcm16', sampleRate: 8000 });
  t.notOk(JSON.stringify(fake.core.http[1]?.headers).includes(KEY), 'no key on the socket');
});

t.test('Ultravox transcripts: deltas accumulate into partials and end in one final text', async (t) => {
  const { fake, recorder } = await started(t);
  fake.sendTranscriptDeltas('agent', ['Hello', ' there', '!']);
  await recorder.until(() => recorder.transcripts.some((x) => x.final));
  t.same(recorder.transcripts, [
    { role: 'agent', text: 'Hello', final: false },
    { role: 'agent', text: 'Hello there', final: false },
    { role: 'agent', text: 'Hello there!', final: true },
  ]);
});

t.test('Ultravox: the gateway ending the call sends hang_up before closing', async (t) => {
  const { fake, session } = await started(t);
  session.close('caller hung up');
  await fake.core.until(() => fake.core.closedWith !== undefined);
  t.same(fake.core.jsonMessages(), [{ type: 'hang_up' }]);
});
