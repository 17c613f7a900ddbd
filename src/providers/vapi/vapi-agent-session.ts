/**
 * @module Vapi in media_bridge through its WebSocket transport
 * (https://docs.vapi.ai/calls/websocket-transport): POST {api}/call with the assistant and a
 * `vapi.websocket` transport, then raw audio as binary frames and JSON control as text frames.
 */
import { MULAW_8000, PCM16_16000, ProviderError, type AgentSessionOptions, type AudioFormat } from '../agent-session.js';
import { SocketAgentSession } from '../socket-agent-session.js';
import { recordField, stringField } from '../wire-json.js';

/** The two formats the transport documents: `mulaw` at 8 kHz and `pcm_s16le` at 16 kHz. */
function transportFormat(preferred: AudioFormat | undefined): AudioFormat {
  return preferred?.encoding === 'pcm16' && preferred.sampleRate === 16000 ? PCM16_16000 : MULAW_8000;
}

/** The Vapi session. The call's id is the conversation id. */
export class VapiAgentSession extends SocketAgentSession {
  readonly inputFormat: AudioFormat;
  readonly outputFormat: AudioFormat;

  constructor(options: AgentSessionOptions) {
    super('vapi', options);
    this.inputFormat = transportFormat(options.preferredFormat);
    this.outputFormat = this.inputFormat;
  }

  protected async connect(): Promise<void> {
    const { endpoint, apiKey } = this.options;
    if (apiKey === undefined) throw new ProviderError(this.provider, 'rejected', 'an API key is required to create the call');
    const url = /^https?:\/\//.test(endpoint.url) ? endpoint.url : `${endpoint.apiBaseUrl ?? 'https://api.vapi.ai'}/call`;
    const mulaw = this.inputFormat.encoding === 'mulaw';
    const body = await this.fetchJson(
      url,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          assistantId: endpoint.externalAgentId,
          transport: {
            provider: 'vapi.websocket',
            audioFormat: { format: mulaw ? 'mulaw' : 'pcm_s16le', container: 'raw', sampleRate: this.inputFormat.sampleRate },
          },
        }),
      },
      'call creation',
    );
    const socketUrl = stringField(recordField(body, 'transport'), 'websocketCallUrl');
    if (socketUrl === undefined || !/^wss?:\/\//.test(socketUrl)) {
      throw new ProviderError(this.provider, 'protocol', 'call creation answer has no transport.websocketCallUrl');
    }
    const callId = stringField(body, 'id');
    if (callId !== undefined) this.handlers.onConversationId?.(callId);
    this.openSocket(socketUrl);
  }

  protected onOpen(): void {
    // The transport has no greeting: the call is live once the socket is open.
    this.ready();
  }

  protected override onBinary(data: Buffer): void {
    this.handlers.onAudio?.(data);
  }

  protected onMessage(message: Record<string, unknown>): void {
    const type = stringField(message, 'type') ?? '(none)';
    switch (type) {
      case 'user-interrupted':
        this.handlers.onClearAudio?.();
        return;
      case 'speech-update':
        // The caller starting to speak is the earliest barge-in signal the transport gives.
        if (stringField(message, 'role') === 'user' && stringField(message, 'status') === 'started') this.handlers.onClearAudio?.();
        return;
      case 'transcript': {
        const text = stringField(message, 'transcript');
        const role = stringField(message, 'role') === 'user' ? 'caller' : 'agent';
        if (text !== undefined) this.handlers.onTranscript?.({ role, text, final: stringField(message, 'transcriptType') === 'final' });
        return;
      }
      default:
        this.log('debug', 'message ignored', { type });
    }
  }

  protected writeAudio(frame: Buffer): void {
    this.sendRaw(frame);
  }

  protected override beforeClose(): void {
    this.sendJson({ type: 'end-call' });
  }
}

/** The `vapi` session factory. */
export function openVapiAgentSession(options: AgentSessionOptions): VapiAgentSession {
  return new VapiAgentSession(options);
}
