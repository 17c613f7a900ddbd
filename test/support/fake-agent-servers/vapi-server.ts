/**
 * @module A fake Vapi with the WebSocket transport: `POST /call` creates a call whose
 * `transport.websocketCallUrl` carries raw audio as binary frames and JSON control as text
 * (https://docs.vapi.ai/calls/websocket-transport).
 */
import { randomUUID } from 'node:crypto';
import { FakeWsCore, json, type FakeAgentServer } from './fake-ws-server.js';

export class FakeVapi implements FakeAgentServer {
  readonly core = new FakeWsCore();
  readonly externalAgentId = '5b1a8d3e-0000-4000-8000-00000000a11c';
  readonly conversationId = randomUUID();
  readonly apiKey: string;
  url = '';
  /** Body of the last POST /call. */
  createBody: Record<string, unknown> | undefined;

  constructor(apiKey: string) {
    this.apiKey = apiKey;
  }

  static async start(apiKey: string): Promise<FakeVapi> {
    const fake = new FakeVapi(apiKey);
    const port = await fake.core.listen();
    fake.url = `http://127.0.0.1:${port}/call`;
    const transportPath = `/${fake.conversationId}/transport`;
    fake.core.route((req, res) => {
      if (req.method !== 'POST' || req.path !== '/call') return false;
      if (req.headers.authorization !== `Bearer ${fake.apiKey}`) return json(res, 401, { message: 'Invalid Key. Hot tip, you may be using the private key instead of the public key, or vice versa.', statusCode: 401 });
      fake.createBody = JSON.parse(req.body) as Record<string, unknown>;
      if (fake.createBody.assistantId !== fake.externalAgentId) return json(res, 400, { message: "Couldn't Get Assistant.", statusCode: 400 });
      const transport = { ...(fake.createBody.transport as object), websocketCallUrl: `ws://127.0.0.1:${port}${transportPath}` };
      return json(res, 201, { id: fake.conversationId, status: 'queued', type: 'vapi.websocketCall', transport });
    });
    fake.core.checkUpgrade((req) => (req.path === transportPath ? undefined : 404));
    return fake;
  }

  receivedAudio(): Buffer {
    return Buffer.concat(this.core.frames.flatMap((f) => (f.kind === 'binary' ? [f.data] : [])));
  }

  sendAudio(audio: Buffer): void {
    this.core.send(audio);
  }

  interrupt(): void {
    this.core.send({ type: 'user-interrupted', turnId: 'turn-1' });
  }

  sendSpeechUpdate(role: 'user' | 'assistant', status: 'started' | 'stopped'): void {
    this.core.send({ type: 'speech-update', role, status, turn: 1 });
  }

  sendTranscript(role: 'caller' | 'agent', text: string, final = true): void {
    this.core.send({ type: 'transcript', role: role === 'caller' ? 'user' : 'assistant', transcriptType: final ? 'final' : 'partial', transcript: text });
  }
}
