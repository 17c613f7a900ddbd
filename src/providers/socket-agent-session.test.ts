import t from 'tap';
import { startedCustomSession } from '../../test/support/fake-agent-servers/custom-agent-server.js';
import { IllegalTransitionError } from '../common/errors.js';
import { MAX_AGENT_MESSAGE_BYTES, MAX_QUEUED_AUDIO_BYTES, nextAgentSessionState, type AgentSessionState } from './socket-agent-session.js';

const STATES: AgentSessionState[] = ['idle', 'connecting', 'ready', 'closed'];
const LEGAL = new Set(['idle>connecting', 'idle>closed', 'connecting>ready', 'connecting>closed', 'ready>closed']);

t.test('agent session state machine: every edge of the diagram is legal and every other edge throws', (t) => {
  for (const from of STATES) {
    for (const to of STATES) {
      const edge = `${from}>${to}`;
      if (LEGAL.has(edge)) t.equal(nextAgentSessionState(from, to), to, edge);
      else t.throws(() => nextAgentSessionState(from, to), IllegalTransitionError, edge);
    }
  }
  t.end();
});

t.test('RFC 6455 §7.4.1: a platform message over MAX_AGENT_MESSAGE_BYTES closes the socket with 1009, an error close', async (t) => {
  const { fake, recorder } = await startedCustomSession(t);
  fake.core.send({ event: 'media', media: { payload: 'A'.repeat(MAX_AGENT_MESSAGE_BYTES) } });
  await recorder.until(() => recorder.closes.length === 1);
  // ws stops reading after the protocol error, so it never sees the platform's answering close: 1006 here.
  t.match(recorder.closes[0], { by: 'error' }, 'reported as an error, not the agent hanging up');
  await fake.core.until(() => fake.core.closedWith !== undefined);
  t.equal(fake.core.closedWith, 1009, 'the platform is told why');
});

t.test('a platform under the limit: a message of a minute of µ-law in base64 is taken', async (t) => {
  const { fake, recorder } = await startedCustomSession(t);
  fake.sendAudio(Buffer.alloc(8000 * 60, 0x55));
  await recorder.until(() => recorder.audioBytes().length === 8000 * 60);
  t.same(recorder.closes, [], 'still open');
});

t.test('a platform that stops reading: caller audio past MAX_QUEUED_AUDIO_BYTES is dropped, then flows again', async (t) => {
  const { fake, session, recorder } = await startedCustomSession(t);
  let media = 0;
  fake.core.onFrame = (frame) => {
    if (frame.kind === 'json' && frame.message.event === 'media') media++;
  };
  fake.core.stopReading();
  const frame = Buffer.alloc(160, 0x55);
  // The kernel's buffers on loopback take some megabytes first; then ws queues in the process.
  let calls = 0;
  while (session.audioFramesDropped === 0 && calls < 200_000) {
    session.sendAudio(frame);
    calls++;
  }
  t.equal(session.audioFramesDropped, 1, `the first frame past the limit is dropped (after ${calls - 1} sent)`);
  for (let i = 0; i < 100; i++) session.sendAudio(frame);
  t.equal(session.audioFramesDropped, 101, 'and every frame after it while the platform does not read');
  const warning = recorder.logs.find((line) => line.includes('platform not reading'));
  const queued = Number(/"queued_bytes":(\d+)/.exec(warning ?? '')?.[1]);
  t.ok(queued > MAX_QUEUED_AUDIO_BYTES && queued < MAX_QUEUED_AUDIO_BYTES + 1024, `logged once with the queue size (${queued} bytes)`);
  t.equal(recorder.logs.filter((line) => line.includes('platform not reading')).length, 1, 'one warning per stall');
  const sent = calls - 1;
  fake.core.resumeReading();
  await fake.core.until(() => media === sent);
  session.sendAudio(frame);
  await fake.core.until(() => media === sent + 1);
  t.equal(session.audioFramesDropped, 101, 'nothing dropped once the platform reads');
  t.ok(recorder.logs.some((line) => line.includes('platform reading again') && line.includes('"frames_dropped":101')), 'the recovery is logged with the count');
});
