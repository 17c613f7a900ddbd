/**
 * @module A fake ElevenLabs Agents Platform: get-signed-url over HTTP and the conversation
 * WebSocket (https://elevenlabs.io/docs/agents-platform/api-reference/agents-platform/websocket),
 * answering `conversation_initiation_client_data` with the metadata of a configured agent.
 */
import { FakeWsCore, json, type FakeAgentServer } from './fake-ws-server.js';


export interface FakeElevenLabsOptions {
  apiKey?: string;
  userInputAudioFormat?: string;
  agentOutputAudioFormat?: string;
}

const SIGNATURE = 'sig-0123456789';

export class FakeElevenLabs implements FakeAgentServer {
  readonly core = new FakeWsCore();
  readonly externalAgentId = 'agent_fake01';
  readonly conversationId = 'conv_fake01';
  readonly apiKey: string | undefined;
  url = '';
  #eventId = 0;
  #pingId = 100;
  readonly #options: FakeElevenLabsOptions;

  constructor(options: FakeElevenLabsOptions) {
    this.#options = options;
    this.apiKey = options.apiKey;
  }

  static async start(options: FakeElevenLabsOptions = {}): Promise<FakeElevenLabs> {
    const fake = new FakeElevenLabs(options);
    const port = await fake.core.listen();
    const base = `127.0.0.1:${port}`;
    fake.url = `ws://${base}/v1/convai/conversation?agent_id=${fake.externalAgentId}`;
    fake.core.route((req, res) => {
      if (req.method !== 'GET' || !req.path.startsWith('/v1/convai/conversation/get-signed-url?')) return false;
      if (req.headers['xi-api-key'] !== fake.apiKey) return json(res, 401, { detail: { status: 'invalid_api_key', message: 'Invalid API key' } });
      const agentId = new URL(req.path, 'http://x').searchParams.get('agent_id');
      return json(res, 200, { signed_url: `ws://${base}/v1/convai/conversation?agent_id=${agentId}&conversation_signature=${SIGNATURE}` });
    });
    fake.core.checkUpgrade((req) => {
      const url = new URL(req.path, 'http://x');
      if (url.pathname !== '/v1/convai/conversation' || url.searchParams.get('agent_id') !== fake.externalAgentId) return 404;
      // A private agent (one with a key) is reachable only through a signed URL.
      if (fake.apiKey !== undefined && url.searchParams.get('conversation_signature') !== SIGNATURE) return 403;
      return undefined;
    });
    fake.core.onFrame = (frame) => {
      if (frame.kind === 'json' && frame.message.type === 'conversation_initiation_client_data') fake.#sendMetadata();
    };
    return fake;
  }

  /** The event id the next agent audio chunk gets unless told otherwise. */
  get lastEventId(): number {
    return this.#eventId;
  }

  receivedAudio(): Buffer {
    const chunks = this.core.jsonMessages().flatMap((m) => (typeof m.user_audio_chunk === 'string' ? [Buffer.from(m.user_audio_chunk, 'base64')] : []));
    return Buffer.concat(chunks);
  }

  /** Sends an `audio` event; a new turn (event id) unless `eventId` is given. */
  sendAudio(audio: Buffer, eventId?: number): void {
    const id = eventId ?? ++this.#eventId;
    this.core.send({ type: 'audio', audio_event: { audio_base_64: audio.toString('base64'), event_id: id } });
  }

  /** Interrupts the current turn: audio with an event id up to this one is stale. */
  interrupt(): void {
    this.core.send({ type: 'interruption', interruption_event: { event_id: this.#eventId } });
  }

  ping(): number {
    const id = ++this.#pingId;
    this.core.send({ type: 'ping', ping_event: { event_id: id, ping_ms: 50 } });
    return id;
  }

  sendTranscript(role: 'caller' | 'agent', text: string): void {
    if (role === 'caller') this.core.send({ type: 'user_transcript', user_transcription_event: { user_transcript: text, event_id: this.#eventId } });
    else this.core.send({ type: 'agent_response', agent_response_event: { agent_response: text, event_id: this.#eventId } });
  }

  #sendMetadata(): void {
    this.core.send({
      type: 'conversation_initiation_metadata',
      conversation_initiation_metadata_event: {
        conversation_id: this.conversationId,
        agent_output_audio_format: this.#options.agentOutputAudioFormat ?? 'ulaw_8000',
        user_input_audio_format: this.#options.userInputAudioFormat ?? 'ulaw_8000',
      },
    });
  }
}
