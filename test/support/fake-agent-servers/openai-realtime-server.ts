/**
 * @module A fake OpenAI Realtime (GA) endpoint: `/v1/realtime?model=` with Bearer auth on the
 * upgrade, `session.created` on connect and `session.updated` after `session.update`
 * (https://platform.openai.com/docs/api-reference/realtime-server-events).
 */
import { FakeWsCore, type FakeAgentServer } from './fake-ws-server.js';

export interface FakeOpenAiOptions {
  apiKey: string;
  /** Use the beta event names (`response.audio.delta`). */
  beta?: boolean;
}

export class FakeOpenAiRealtime implements FakeAgentServer {
  readonly core = new FakeWsCore();
  readonly externalAgentId = 'gpt-realtime';
  readonly conversationId = 'sess_fake01';
  readonly apiKey: string;
  url = '';
  /** Item id of the response being spoken. */
  itemId = 'item_1';
  #items = 1;
  readonly #beta: boolean;

  constructor(options: FakeOpenAiOptions) {
    this.apiKey = options.apiKey;
    this.#beta = options.beta ?? false;
  }

  static async start(options: FakeOpenAiOptions): Promise<FakeOpenAiRealtime> {
    const fake = new FakeOpenAiRealtime(options);
    const port = await fake.core.listen();
    fake.url = `ws://127.0.0.1:${port}/v1/realtime?model=${fake.externalAgentId}`;
    fake.core.checkUpgrade((req) => {
      if (!req.path.startsWith('/v1/realtime?')) return 404;
      return req.headers.authorization === `Bearer ${fake.apiKey}` ? undefined : 401;
    });
    fake.core.onConnection = () => fake.core.send({ type: 'session.created', event_id: 'event_1', session: { id: fake.conversationId, type: 'realtime' } });
    fake.core.onFrame = (frame) => {
      if (frame.kind !== 'json' || frame.message.type !== 'session.update') return;
      fake.core.send({ type: 'session.updated', event_id: 'event_2', session: frame.message.session });
    };
    return fake;
  }

  /** The `session` object of the client's first session.update. */
  sessionUpdate(): Record<string, unknown> | undefined {
    return this.core.jsonMessages().find((m) => m.type === 'session.update')?.session as Record<string, unknown> | undefined;
  }

  /** Client messages of `type`. */
  messagesOf(type: string): Record<string, unknown>[] {
    return this.core.jsonMessages().filter((m) => m.type === type);
  }

  receivedAudio(): Buffer {
    return Buffer.concat(this.messagesOf('input_audio_buffer.append').map((m) => Buffer.from(String(m.audio), 'base64')));
  }

  sendAudio(audio: Buffer): void {
    this.core.send({
      type: this.#beta ? 'response.audio.delta' : 'response.output_audio.delta',
      event_id: 'event_d',
      response_id: 'resp_1',
      item_id: this.itemId,
      output_index: 0,
      content_index: 0,
      delta: audio.toString('base64'),
    });
  }

  /** Server VAD heard the caller: the response being spoken is interrupted. */
  interrupt(): void {
    this.core.send({ type: 'input_audio_buffer.speech_started', event_id: 'event_s', audio_start_ms: 1000, item_id: 'item_user' });
    this.itemId = `item_${++this.#items}`;
  }

  sendTranscript(role: 'caller' | 'agent', text: string): void {
    if (role === 'caller') {
      this.core.send({ type: 'conversation.item.input_audio_transcription.completed', item_id: 'item_user', content_index: 0, transcript: text });
    } else {
      this.core.send({
        type: this.#beta ? 'response.audio_transcript.done' : 'response.output_audio_transcript.done',
        response_id: 'resp_1', item_id: this.itemId, output_index: 0, content_index: 0, transcript: text,
      });
    }
  }
}
