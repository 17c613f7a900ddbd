/**
 * @module Ultravox in media_bridge through the `serverWebSocket` medium
 * (https://docs.ultravox.ai/apps/websockets): POST {api}/api/agents/{id}/calls with `X-API-Key`
 * answers a `joinUrl`; binary frames carry s16le PCM both ways and text frames data messages.
 */
import { ProviderError, type AgentSessionOptions, type AudioFormat } from '../agent-session.js';
import { SocketAgentSession } from '../socket-agent-session.js';
import { numberField, stringField } from '../wire-json.js';

/** How much agent audio Ultravox may send ahead of real time; it clears its own copy on barge-in. */
const CLIENT_BUFFER_SIZE_MS = 30_000;

/** Only PCM is documented for serverWebSocket; 16 kHz when preferred, else 8 kHz. */
function pcmFormat(preferred: AudioFormat | undefined): AudioFormat {
  const sampleRate = preferred?.encoding === 'pcm16' && preferred.sampleRate === 16000 ? 16000 : 8000;
  return Object.freeze({ encoding: 'pcm16', sampleRate });
}

/** The Ultravox session. The call id from the creation answer is the conversation id. */
export class UltravoxAgentSession extends SocketAgentSession {
  readonly inputFormat: AudioFormat;
  readonly outputFormat: AudioFormat;
  /** Transcript text so far by message ordinal: deltas add to it, `text` replaces it. */
  readonly #transcripts = new Map<number, string>();

  constructor(options: AgentSessionOptions) {
    super('ultravox', options);
    this.inputFormat = pcmFormat(options.preferredFormat);
    this.outputFormat = this.inputFormat;
  }

  protected async connect(): Promise<void> {
    const { endpoint, apiKey } = this.options;
    if (apiKey === undefined) throw new ProviderError(this.provider, 'rejected', 'an API key is required to create the call');
    const url = /^https?:\/\//.test(endpoint.url)
      ? endpoint.url
      : `${endpoint.apiBaseUrl ?? 'https://api.ultravox.ai'}/api/agents/${encodeURIComponent(endpoint.externalAgentId)}/calls`;
    const rate = this.inputFormat.sampleRate;
    const body = await this.fetchJson(
      url,
      {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({
          medium: { serverWebSocket: { inputSampleRate: rate, outputSampleRate: rate, clientBufferSizeMs: CLIENT_BUFFER_SIZE_MS } },
        }),
      },
      'call creation',
    );
    const joinUrl = stringField(body, 'joinUrl');
    if (joinUrl === undefined || !/^wss?:\/\//.test(joinUrl)) throw new ProviderError(this.provider, 'protocol', 'call creation answer has no ws(s) joinUrl');
    const callId = stringField(body, 'callId');
    if (callId !== undefined) this.handlers.onConversationId?.(callId);
    this.openSocket(joinUrl);
  }

  protected onOpen(): void {
    this.ready();
  }

  protected override onBinary(data: Buffer): void {
    this.handlers.onAudio?.(data);
  }

  protected onMessage(message: Record<string, unknown>): void {
    const type = stringField(message, 'type') ?? '(none)';
    switch (type) {
      case 'playback_clear_buffer':
        this.handlers.onClearAudio?.();
        return;
      case 'transcript':
        this.#onTranscript(message);
        return;
      default:
        this.log('debug', 'message ignored', { type });
    }
  }

  protected writeAudio(frame: Buffer): void {
    this.sendRaw(frame);
  }

  protected override beforeClose(): void {
    this.sendJson({ type: 'hang_up' });
  }

  #onTranscript(message: Record<string, unknown>): void {
    const ordinal = numberField(message, 'ordinal') ?? -1;
    const text = stringField(message, 'text');
    const delta = stringField(message, 'delta');
    const sofar = text ?? (this.#transcripts.get(ordinal) ?? '') + (delta ?? '');
    const final = message.final === true;
    if (final) this.#transcripts.delete(ordinal);
    else this.#transcripts.set(ordinal, sofar);
    const role = stringField(message, 'role') === 'user' ? 'caller' : 'agent';
    if (sofar !== '') this.handlers.onTranscript?.({ role, text: sofar, final });
  }
}

/** The `ultravox` session factory. */
export function openUltravoxAgentSession(options: AgentSessionOptions): UltravoxAgentSession {
  return new UltravoxAgentSession(options);
}
