/**
 * @module A fake Ultravox: `POST /api/agents/{id}/calls` with medium `serverWebSocket` answers a
 * `joinUrl` whose socket carries s16le PCM as binary frames and data messages as text
 * (https://docs.ultravox.ai/apps/websockets).
 */
import { randomUUID } from 'node:crypto';
import { FakeWsCore, json, type FakeAgentServer } from './fake-ws-server.js';

export class FakeUltravox implements FakeAgentServer {
  readonly core = new FakeWsCore();
  readonly externalAgentId = randomUUID();
  readonly conversationId = randomUUID();
  readonly apiKey: string;
  url = '';
  createBody: Record<string, unknown> | undefined;
  #ordinal = 0;

  constructor(apiKey: string) {
    this.apiKey = apiKey;
  }

  static async start(apiKey: string): Promise<FakeUltravox> {
    const fake = new FakeUltravox(apiKey);
    const port = await fake.core.listen();
    fake.url = `http://127.0.0.1:${port}/api/agents/${fake.externalAgentId}/calls`;
    const joinPath = `/calls/${fake.conversationId}/server_web_socket`;
    fake.core.route((req, res) => {
      const match = /^\/api\/agents\/([^/]+)\/calls$/.exec(req.path);
      if (req.method !== 'POST' || !match) return false;
      if (req.headers['x-api-key'] !== fake.apiKey) return json(res, 403, { detail: 'Invalid API key.' });
      if (match[1] !== fake.externalAgentId) return json(res, 404, { detail: 'Not found.' });
      fake.createBody = JSON.parse(req.body) as Record<string, unknown>;
      return json(res, 201, { callId: fake.conversationId, joinUrl: `ws://127.0.0.1:${port}${joinPath}` });
    });
    fake.core.checkUpgrade((req) => (req.path === joinPath ? undefined : 404));
    return fake;
  }

  receivedAudio(): Buffer {
    return Buffer.concat(this.core.frames.flatMap((f) => (f.kind === 'binary' ? [f.data] : [])));
  }

  sendAudio(audio: Buffer): void {
    this.core.send(audio);
  }

  interrupt(): void {
    this.core.send({ type: 'playback_clear_buffer' });
  }

  sendTranscript(role: 'caller' | 'agent', text: string): void {
    this.core.send({ type: 'transcript', role: role === 'caller' ? 'user' : 'agent', medium: 'voice', text, final: true, ordinal: this.#ordinal++ });
  }

  /** A transcript built from deltas, ending final. */
  sendTranscriptDeltas(role: 'caller' | 'agent', deltas: string[]): void {
    const ordinal = this.#ordinal++;
    deltas.forEach((delta, i) => {
      this.core.send({ type: 'transcript', role: role === 'caller' ? 'user' : 'agent', medium: 'voice', delta, final: i === deltas.length - 1, ordinal });
    });
  }
}
