/**
 * @module The AgentSession contract every streaming adapter passes, run by each adapter's own
 * test against a local fake of its platform. Kept beside the code it specifies; the fakes are
 * passed in so that src/ does not depend on test/. The harness the rules use (recorder, fakes,
 * sockets) is in agent-session-contract-harness.ts.
 */
import type { Test } from 'tap';
import { FakeClock } from '../common/clock.js';
import { ProviderError, bytesPerMs } from './agent-session.js';
import {
  CONTRACT_KEY,
  CONTRACT_TIMEOUT_MS,
  CONTRACT_WRONG_KEY,
  closedPort,
  fakeFor,
  openFor,
  pattern,
  silentServer,
  type AgentSessionSubject,
} from './agent-session-contract-harness.js';

export { SessionRecorder, openFor, type AgentSessionSubject, type ContractAgentFake } from './agent-session-contract-harness.js';

/** One rule: a title citing what it checks, and the check. */
type ContractRule = [title: string, check: (t: Test, subject: AgentSessionSubject) => Promise<void>];

/** Start resolves once the platform is ready, with both formats declared. */
async function startResolvesWhenReady(t: Test, subject: AgentSessionSubject): Promise<void> {
  const fake = await fakeFor(t, subject);
  const { session } = openFor(t, subject, fake);
  await session.start();
  for (const format of [session.inputFormat, session.outputFormat]) {
    t.ok(['mulaw', 'pcm16'].includes(format.encoding) && format.sampleRate >= 8000, 'format declared');
  }
}

/** Caller audio reaches the platform byte for byte in the declared input format. */
async function callerAudioReachesPlatform(t: Test, subject: AgentSessionSubject): Promise<void> {
  const fake = await fakeFor(t, subject);
  const { session } = openFor(t, subject, fake);
  await session.start();
  const frames = [0, 1, 2].map((i) => pattern(bytesPerMs(session.inputFormat, 20), i * 31));
  for (const frame of frames) session.sendAudio(frame);
  const expected = Buffer.concat(frames);
  await fake.core.until(() => fake.receivedAudio().length >= expected.length);
  t.same(fake.receivedAudio(), expected);
}

/** Platform audio reaches onAudio byte for byte in the declared output format. */
async function platformAudioReachesOnAudio(t: Test, subject: AgentSessionSubject): Promise<void> {
  const fake = await fakeFor(t, subject);
  const { session, recorder } = openFor(t, subject, fake);
  await session.start();
  const audio = pattern(bytesPerMs(session.outputFormat, 40), 5);
  fake.sendAudio(audio);
  await recorder.until(() => recorder.audioBytes().length >= audio.length);
  t.same(recorder.audioBytes(), audio);
}

/** Barge-in: the platform interruption reaches onClearAudio. */
async function bargeInClearsAudio(t: Test, subject: AgentSessionSubject): Promise<void> {
  const fake = await fakeFor(t, subject);
  const { session, recorder } = openFor(t, subject, fake);
  await session.start();
  fake.sendAudio(pattern(bytesPerMs(session.outputFormat, 20), 1));
  await recorder.until(() => recorder.audio.length > 0);
  fake.interrupt();
  await recorder.until(() => recorder.clears > 0);
  t.ok(recorder.clears >= 1);
}

/** Transcripts surface with caller and agent roles. */
async function transcriptsSurfaceWithRoles(t: Test, subject: AgentSessionSubject): Promise<void> {
  const fake = await fakeFor(t, subject);
  if (!fake.sendTranscript) {
    t.pass('the protocol carries no transcripts');
    return;
  }
  const { session, recorder } = openFor(t, subject, fake);
  await session.start();
  fake.sendTranscript('caller', 'I need a plumber');
  fake.sendTranscript('agent', 'Sure, what is the address?');
  await recorder.until(() => recorder.transcripts.filter((x) => x.final).length >= 2);
  t.same(recorder.transcripts.filter((x) => x.final).map((x) => [x.role, x.text]), [
    ['caller', 'I need a plumber'],
    ['agent', 'Sure, what is the address?'],
  ]);
}

/** The conversation id surfaces once. */
async function conversationIdSurfaces(t: Test, subject: AgentSessionSubject): Promise<void> {
  const fake = await fakeFor(t, subject);
  const { session, recorder } = openFor(t, subject, fake);
  await session.start();
  if (fake.conversationId === undefined) t.same(recorder.conversationIds, [], 'the protocol has none');
  else t.same(recorder.conversationIds, [fake.conversationId]);
}

/** RFC 6455 §7.4.1: the platform closing with 1000 is the agent hanging up. */
async function agentCloseIsHangup(t: Test, subject: AgentSessionSubject): Promise<void> {
  const fake = await fakeFor(t, subject);
  const { session, recorder } = openFor(t, subject, fake);
  await session.start();
  fake.core.closeSocket(1000, 'goodbye');
  await recorder.until(() => recorder.closes.length > 0);
  t.same(recorder.closes, [{ by: 'agent', code: 1000, reason: 'goodbye' }]);
  session.close('after');
  t.equal(recorder.closes.length, 1, 'no second onClose');
}

/** Close() is idempotent, reports once and closes the socket. */
async function closeIsIdempotent(t: Test, subject: AgentSessionSubject): Promise<void> {
  const fake = await fakeFor(t, subject);
  const { session, recorder } = openFor(t, subject, fake);
  await session.start();
  session.close('caller hung up');
  session.close('again');
  session.sendAudio(pattern(160, 0));
  await fake.core.until(() => fake.core.closedWith !== undefined);
  t.equal(fake.core.closedWith, 1000);
  t.same(recorder.closes, [{ by: 'gateway', code: 1000, reason: 'caller hung up' }]);
}

/** An endpoint that refuses connections rejects start as unreachable. */
async function refusedEndpointIsUnreachable(t: Test, subject: AgentSessionSubject): Promise<void> {
  const fake = await fakeFor(t, subject);
  const port = await closedPort();
  const url = fake.url.replace(/127\.0\.0\.1:\d+/, `127.0.0.1:${port}`);
  const { session, recorder } = openFor(t, subject, fake, { url });
  const error = await session.start().then(() => undefined, (e: unknown) => e);
  t.ok(error instanceof ProviderError && error.kind === 'unreachable', 'unreachable');
  t.same(recorder.closes, [], 'a session that never started reports no close');
}

/** An endpoint that never answers rejects start as unreachable at the time-out. */
async function silentEndpointTimesOut(t: Test, subject: AgentSessionSubject): Promise<void> {
  const fake = await fakeFor(t, subject);
  const { port, close } = await silentServer();
  t.teardown(close);
  const clock = new FakeClock();
  const url = fake.url.replace(/127\.0\.0\.1:\d+/, `127.0.0.1:${port}`);
  const { session } = openFor(t, subject, fake, { url, clock });
  const started = session.start().then(() => undefined, (e: unknown) => e);
  clock.advance(CONTRACT_TIMEOUT_MS);
  const error = await started;
  t.ok(error instanceof ProviderError && error.kind === 'unreachable', 'unreachable');
}

/**
 * No compression on the audio path, even with a platform that accepts it (the fakes do): deflating
 * base64 audio every 20 ms gains little and costs a zlib context per direction per call.
 */
async function noCompressionNegotiated(t: Test, subject: AgentSessionSubject): Promise<void> {
  const fake = await fakeFor(t, subject);
  const { session } = openFor(t, subject, fake);
  await session.start();
  t.equal(fake.core.socket?.extensions, '', 'no extension negotiated');
}

/** The key never appears in a rejection or a log line. */
async function keyNeverLeaks(t: Test, subject: AgentSessionSubject): Promise<void> {
  const fake = await fakeFor(t, subject);
  const refused = openFor(t, subject, fake, { apiKey: CONTRACT_WRONG_KEY });
  const error = await refused.session.start().then(() => undefined, (e: unknown) => e);
  if (subject.usesKey) t.ok(error instanceof ProviderError && error.kind === 'rejected', 'a wrong key is rejected');
  const good = openFor(t, subject, fake);
  await good.session.start();
  good.session.sendAudio(pattern(bytesPerMs(good.session.inputFormat, 20), 0));
  good.session.close('done');
  const text = [String(error), error instanceof Error ? error.message : '', ...refused.recorder.logs, ...good.recorder.logs].join('\n');
  t.notOk(text.includes(CONTRACT_KEY) || text.includes(CONTRACT_WRONG_KEY), 'no key in messages or logs');
}

const RULES: readonly ContractRule[] = [
  ['start resolves once the platform is ready, with both formats declared', startResolvesWhenReady],
  ['caller audio reaches the platform byte for byte in the declared input format', callerAudioReachesPlatform],
  ['platform audio reaches onAudio byte for byte in the declared output format', platformAudioReachesOnAudio],
  ['barge-in: the platform interruption reaches onClearAudio', bargeInClearsAudio],
  ['transcripts surface with caller and agent roles', transcriptsSurfaceWithRoles],
  ['the conversation id surfaces once', conversationIdSurfaces],
  ['RFC 6455 §7.4.1: the platform closing with 1000 is the agent hanging up', agentCloseIsHangup],
  ['close() is idempotent, reports once and closes the socket', closeIsIdempotent],
  ['an endpoint that refuses connections rejects start as unreachable', refusedEndpointIsUnreachable],
  ['an endpoint that never answers rejects start as unreachable at the time-out', silentEndpointTimesOut],
  ['the key never appears in a rejection or a log line', keyNeverLeaks],
  ['RFC 7692 §5: the client offers no permessage-deflate, so audio frames go uncompressed', noCompressionNegotiated],
];

/** Runs every rule of the contract against `subject`, one subtest each. */
export function agentSessionContract(t: Test, subject: AgentSessionSubject): void {
  for (const [title, check] of RULES) void t.test(title, (t) => check(t, subject));
}
