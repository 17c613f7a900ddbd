/**
 * @module ElevenLabs Agents Platform in media_bridge: the conversation WebSocket
 * (https://elevenlabs.io/docs/agents-platform/api-reference/agents-platform/websocket), reached
 * through a signed URL when the tenant stored a key (GET /v1/convai/conversation/get-signed-url).
 */
import { MULAW_8000, ProviderError, type AgentSessionOptions, type AudioFormat } from '../agent-session.js';
import { SocketAgentSession } from '../socket-agent-session.js';
import { stringField } from '../wire-json.js';
import { audioFormatOf, readServerMessage, type ConversationInitiationClientData, type Pong, type UserAudioChunk } from './wire-messages.js';

/** The ElevenLabs agent session. Formats are the agent's own, read from the initiation metadata. */
export class ElevenLabsAgentSession extends SocketAgentSession {
  #input: AudioFormat = MULAW_8000;
  #output: AudioFormat = MULAW_8000;
  /** Highest interruption event id; audio events at or below it belong to an interrupted turn. */
  #lastInterruptId = -1;

  constructor(options: AgentSessionOptions) {
    super('elevenlabs', options);
  }

  get inputFormat(): AudioFormat {
    return this.#input;
  }

  get outputFormat(): AudioFormat {
    return this.#output;
  }

  protected async connect(): Promise<void> {
    const { endpoint, apiKey } = this.options;
    const url = new URL(endpoint.url);
    if (!url.searchParams.has('agent_id')) url.searchParams.set('agent_id', endpoint.externalAgentId);
    if (apiKey === undefined) {
      // A public agent: the documented URL needs no credentials.
      this.openSocket(url.toString());
      return;
    }
    const api = endpoint.apiBaseUrl ?? `${url.protocol === 'ws:' ? 'http:' : 'https:'}//${url.host}`;
    const signedUrlRequest = `${api}/v1/convai/conversation/get-signed-url?agent_id=${encodeURIComponent(endpoint.externalAgentId)}`;
    const body = await this.fetchJson(signedUrlRequest, { headers: { 'xi-api-key': apiKey } }, 'signed URL request');
    const signedUrl = stringField(body, 'signed_url');
    // The signed URL carries the token; it is opaque and never logged.
    if (signedUrl === undefined || !/^wss?:\/\//.test(signedUrl)) {
      throw new ProviderError(this.provider, 'protocol', 'signed URL answer has no ws(s) signed_url');
    }
    this.openSocket(signedUrl);
  }

  protected onOpen(): void {
    const init: ConversationInitiationClientData = { type: 'conversation_initiation_client_data' };
    this.sendJson(init);
  }

  protected onMessage(raw: Record<string, unknown>): void {
    const message = readServerMessage(raw);
    switch (message.type) {
      case 'conversation_initiation_metadata':
        this.#onMetadata(message.conversationId, message.userInputFormat, message.agentOutputFormat);
        return;
      case 'audio':
        // The official client plays audio only when lastInterruptId <= event_id; an event id
        // equal to the interruption's is the interrupted turn itself, so it is dropped too.
        if (message.eventId <= this.#lastInterruptId) return;
        this.handlers.onAudio?.(Buffer.from(message.audioBase64, 'base64'));
        return;
      case 'interruption':
        this.#lastInterruptId = Math.max(this.#lastInterruptId, message.eventId);
        this.handlers.onClearAudio?.();
        return;
      case 'ping': {
        const pong: Pong = { type: 'pong', event_id: message.eventId };
        this.sendJson(pong);
        return;
      }
      case 'user_transcript':
        this.handlers.onTranscript?.({ role: 'caller', text: message.text, final: message.final });
        return;
      case 'agent_response':
        this.handlers.onTranscript?.({ role: 'agent', text: message.text, final: true });
        return;
      case 'error':
        this.log('warn', 'platform error event', { error: message.message });
        return;
      case 'other':
        this.log('debug', 'message ignored', { type: message.name });
        return;
    }
  }

  protected writeAudio(frame: Buffer): void {
    const chunk: UserAudioChunk = { user_audio_chunk: frame.toString('base64') };
    this.sendJson(chunk);
  }

  #onMetadata(conversationId: string, userInputFormat: string, agentOutputFormat: string): void {
    if (this.state !== 'connecting') return;
    const input = audioFormatOf(userInputFormat);
    const output = audioFormatOf(agentOutputFormat);
    if (!input || !output) {
      this.failStart('protocol', `agent audio formats ${userInputFormat}/${agentOutputFormat} are not supported`);
      return;
    }
    this.#input = input;
    this.#output = output;
    this.handlers.onConversationId?.(conversationId);
    this.ready();
  }
}

/** The `elevenlabs` session factory. */
export function openElevenLabsAgentSession(options: AgentSessionOptions): ElevenLabsAgentSession {
  return new ElevenLabsAgentSession(options);
}
