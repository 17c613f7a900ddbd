/**
 * @module The harness of the AgentSession contract (agent-session-contract.ts): the fake platform
 * and subject shapes, a recorder of everything a session reports, sessions and fakes closed at
 * teardown, and the sockets that play an unreachable or a hung platform. Apart from the rules so
 * that the rules read as the contract, and adapter tests can drive sessions the same way.
 */
import { createServer as createNetServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { Test } from 'tap';
import { systemClock, type Clock } from '../common/clock.js';
import type { AgentCallInfo, AgentCloseInfo, AgentSession, AgentSessionFactory, AgentSessionHandlers, AgentTranscript } from './agent-session.js';

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

/** The key each fake accepts. */
export const CONTRACT_KEY = 'sk_contract_9xQ4LmZ2pW7rT5vB8nK1';
/** A key each fake refuses. */
export const CONTRACT_WRONG_KEY = 'sk_wrong_3hJ6dF0sA9gL2kP5qR8e';
/** The sessions' connect time-out. */
export const CONTRACT_TIMEOUT_MS = 3_000;

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
  options: { apiKey?: string; clock?: Clock; url?: string; externalAgentId?: string; call?: Partial<AgentCallInfo> } = {},
): { session: AgentSession; recorder: SessionRecorder } {
  const recorder = new SessionRecorder();
  const session = subject.open({
    call: { callId: 'call_contract01', callControlId: 'v3:contract01', from: '+15550001111', to: '+15550002222', direction: 'inbound', ...options.call },
    endpoint: { url: options.url ?? fake.url, externalAgentId: options.externalAgentId ?? fake.externalAgentId },
    ...('apiKey' in options ? (options.apiKey === undefined ? {} : { apiKey: options.apiKey }) : { apiKey: CONTRACT_KEY }),
    clock: options.clock ?? systemClock,
    log: recorder.log,
    connectTimeoutMs: CONTRACT_TIMEOUT_MS,
    handlers: recorder.handlers,
  });
  t.teardown(() => session.close('test over'));
  return { session, recorder };
}

/** A fake for one case, closed at teardown. */
export async function fakeFor(t: Test, subject: AgentSessionSubject): Promise<ContractAgentFake> {
  const fake = await subject.startFake(CONTRACT_KEY);
  t.teardown(() => fake.core.close());
  return fake;
}

/** A counting byte pattern, `n` bytes long, in a valid range for both µ-law and PCM. */
export function pattern(n: number, seed: number): Buffer {
  return Buffer.from(Array.from({ length: n }, (_, i) => (seed + i * 7) & 0xff));
}

/** A port nothing listens on: bound, then released. */
export async function closedPort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A TCP server that accepts and then says nothing, like a platform that hangs. */
export async function silentServer(): Promise<{ port: number; close: () => void }> {
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
