/**
 * @module The AgentSession contract every streaming adapter passes, run by each adapter's own
 * test against a local fake of its platform. Kept beside the code it specifies; the fakes are
 * passed in so that src/ does not depend on test/.
 */
import { createServer as createNetServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { Test } from 'tap';
import { FakeClock, systemClock, type Clock } from '../common/clock.js';
import {
  ProviderError,
  bytesPerMs,
  type AgentCloseInfo,
  type AgentSession,
  type AgentSessionFactory,
  type AgentSessionHandlers,
  type AgentTranscript,
} from './agent-session.js';

/** The part of a fake platform the contract drives (see test/support/fake-agent-servers). */
export interface ContractAgentFake {
  readonly url: string;
  readonly externalAgentId: string;
  readonly conversationId: string | undefined;
  receivedAudio(): Buffer;
  sendAudio(audio: Buffer): void;
  interrupt(): void;
  sendTranscript?(role: 'caller' | 'agent', text: string): void;
  readonly core: {
    /** The platform side of the socket once connected; `extensions` is what RFC 7692 negotiation settled. */
    readonly socket: { readonly extensions: string } | undefined;
    readonly closedWith: number | undefined;
    until(check: () => boolean): Promise<void>;
    closeSocket(code: number, reason?: string): void;
    close(): Promise<void>;
  };
}

/** One adapter under contract. */
export interface AgentSessionSubject {
  provider: string;
  open: AgentSessionFactory;
  /** Starts a fake that accepts only `apiKey`. */
  startFake(apiKey: string): Promise<ContractAgentFake>;
  /** False for providers that never send a key (custom): the refusal case is skipped. */
  usesKey: boolean;
}

const KEY = 'sk_contract_9xQ4LmZ2pW7rT5vB8nK1';
const WRONG_KEY = 'sk_wrong_3hJ6dF0sA9gL2kP5qR8e';
const TIMEOUT_MS = 3_000;

/** Everything a session reported, with a way to wait for more. */
export class SessionRecorder {
  readonly audio: Buffer[] = [];
  readonly transcripts: AgentTranscript[] = [];
  readonly conversationIds: string[] = [];
  readonly closes: AgentCloseInfo[] = [];
  readonly marks: string[] = [];
  readonly logs: string[] = [];
  clears = 0;
  readonly #waiters: { check: () => boolean; resolve: () => void }[] = [];

  readonly handlers: AgentSessionHandlers = {
    onAudio: (frame) => this.#push(() => this.audio.push(Buffer.from(frame))),
    onClearAudio: () => this.#push(() => (this.clears += 1)),
    onMark: (name) => this.#push(() => this.marks.push(name)),
    onTranscript: (t) => this.#push(() => this.transcripts.push(t)),
    onConversationId: (id) => this.#push(() => this.conversationIds.push(id)),
    onClose: (info) => this.#push(() => this.closes.push(info)),
  };

  log = (level: string, message: string, fields?: Record<string, string | number | boolean>): void => {
    this.#push(() => this.logs.push(`${level} ${message} ${JSON.stringify(fields ?? {})}`));
  };

  audioBytes(): Buffer {
    return Buffer.concat(this.audio);
  }

  until(check: () => boolean): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ check, resolve }));
  }

  #push(change: () => unknown): void {
    change();
    for (const waiter of [...this.#waiters]) {
      if (!waiter.check()) continue;
      this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  }
}

/** Builds a session for `fake`, closed at teardown. */
export function openFor(
  t: Test,
  subject: AgentSessionSubject,
  fake: ContractAgentFake,
  options: { apiKey?: string; clock?: Clock; url?: string; externalAgentId?: string } = {},
): { session: AgentSession; recorder: SessionRecorder } {
  const recorder = new SessionRecorder();
  const session = subject.open({
    call: { callId: 'call_contract01', callControlId: 'v3:contract01', from: '+15550001111', to: '+15550002222', direction: 'inbound' },
    endpoint: { url: options.url ?? fake.url, externalAgentId: options.externalAgentId ?? fake.externalAgentId },
    ...('apiKey' in options ? (options.apiKey === undefined ? {} : { apiKey: options.apiKey }) : { apiKey: KEY }),
    clock: options.clock ?? systemClock,
    log: recorder.log,
    connectTimeoutMs: TIMEOUT_MS,
    handlers: recorder.handlers,
  });
  t.teardown(() => session.close('test over'));
  return { session, recorder };
}

/** A fake for one case, closed at teardown. */
async function fakeFor(t: Test, subject: AgentSessionSubject): Promise<ContractAgentFake> {
  const fake = await subject.startFake(KEY);
  t.teardown(() => fake.core.close());
  return fake;
}

/** A counting byte pattern, `n` bytes long, in a valid range for both µ-law and PCM. */
function pattern(n: number, seed: number): Buffer {
  return Buffer.from(Array.from({ length: n }, (_, i) => (seed + i * 7) & 0xff));
}

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
  clock.advance(TIMEOUT_MS);
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
  const refused = openFor(t, subject, fake, { apiKey: WRONG_KEY });
  const error = await refused.session.start().then(() => undefined, (e: unknown) => e);
  if (subject.usesKey) t.ok(error instanceof ProviderError && error.kind === 'rejected', 'a wrong key is rejected');
  const good = openFor(t, subject, fake);
  await good.session.start();
  good.session.sendAudio(pattern(bytesPerMs(good.session.inputFormat, 20), 0));
  good.session.close('done');
  const text = [String(error), error instanceof Error ? error.message : '', ...refused.recorder.logs, ...good.recorder.logs].join('\n');
  t.notOk(text.includes(KEY) || text.includes(WRONG_KEY), 'no key in messages or logs');
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

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A TCP server that accepts and then says nothing, like a platform that hangs. */
async function silentServer(): Promise<{ port: number; close: () => void }> {
  const sockets = new Set<Socket>();
  const server: Server = createNetServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => {
      sockets.forEach((s) => s.destroy());
      server.close();
    },
  };
}
