/**
 * @module A fake agent for provider `custom`: the server side of the gateway's Twilio Media
 * Streams protocol (docs/API.md "Agent WebSocket protocol"). It waits for `start`, records what the gateway sent,
 * and can send `media`, `mark` and `clear`.
 */
import type { Test } from 'tap';
import { openFor, type AgentSessionSubject, type SessionRecorder } from '../../../src/providers/agent-session-contract.js';
import { openCustomAgentSession, type CustomAgentSession } from '../../../src/providers/custom/custom-agent-session.js';
import type { AgentCallInfo } from '../../../src/providers/agent-session.js';
import { FakeWsCore, type FakeAgentServer } from './fake-ws-server.js';

export class FakeCustomAgent implements FakeAgentServer {
  readonly core = new FakeWsCore();
  readonly externalAgentId = 'custom-agent';
  readonly apiKey = undefined;
  readonly conversationId = undefined;
  url = '';

  static async start(): Promise<FakeCustomAgent> {
    const fake = new FakeCustomAgent();
    const port = await fake.core.listen();
    fake.url = `ws://127.0.0.1:${port}/agent`;
    return fake;
  }

  /** Events the gateway sent, by name, in order. */
  events(): string[] {
    return this.core.jsonMessages().map((m) => String(m.event));
  }

  streamSid(): string | undefined {
    const start = this.core.jsonMessages().find((m) => m.event === 'start');
    return typeof start?.streamSid === 'string' ? start.streamSid : undefined;
  }

  receivedAudio(): Buffer {
    const payloads = this.core.jsonMessages().flatMap((m) => {
      const media = m.media as { payload?: string } | undefined;
      return m.event === 'media' && typeof media?.payload === 'string' ? [Buffer.from(media.payload, 'base64')] : [];
    });
    return Buffer.concat(payloads);
  }

  sendAudio(audio: Buffer): void {
    this.core.send({ event: 'media', streamSid: this.streamSid(), media: { payload: audio.toString('base64') } });
  }

  /** Digits toward the remote party (docs/API.md "Digits toward the callee"). */
  sendDigits(digits: string): void {
    this.core.send({ event: 'dtmf', streamSid: this.streamSid(), digits });
  }

  /** docs/API.md "Transfers asked by the agent": the extension event asking for the remote party to be transferred. */
  transfer(to: unknown): void {
    this.core.send({ event: 'transfer', streamSid: this.streamSid(), to });
  }

  /** docs/API.md "Agent WebSocket protocol": the extension event ending the call. */
  hangup(): void {
    this.core.send({ event: 'hangup', streamSid: this.streamSid() });
  }

  sendMark(name: string): void {
    this.core.send({ event: 'mark', streamSid: this.streamSid(), mark: { name } });
  }

  interrupt(): void {
    this.core.send({ event: 'clear', streamSid: this.streamSid() });
  }
}

/** Provider `custom` under the AgentSession contract, against this fake. */
export const customSubject: AgentSessionSubject = {
  provider: 'custom',
  open: openCustomAgentSession,
  startFake: () => FakeCustomAgent.start(),
  usesKey: false,
};

/** A fake, and a custom session started against it that has sent its `start`; both closed at teardown. */
export async function startedCustomSession(t: Test, call?: Partial<AgentCallInfo>): Promise<{ fake: FakeCustomAgent; session: CustomAgentSession; recorder: SessionRecorder }> {
  const fake = await FakeCustomAgent.start();
  t.teardown(() => fake.core.close());
  const { session, recorder } = openFor(t, customSubject, fake, { apiKey: undefined, call });
  await session.start();
  await fake.core.until(() => fake.events().includes('start'));
  return { fake, session: session as CustomAgentSession, recorder };
}
