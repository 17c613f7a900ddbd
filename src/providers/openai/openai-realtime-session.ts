/**
 * @module OpenAI Realtime (GA) in media_bridge: `wss://{host}/v1/realtime?model=` with Bearer auth,
 * G.711 µ-law both ways and server VAD (https://platform.openai.com/docs/guides/realtime-conversations,
 * client events https://platform.openai.com/docs/api-reference/realtime-client-events). The beta
 * event names (`response.audio.delta`, `response.audio_transcript.*`) are read as well.
 */
import { MULAW_8000, ProviderError, bytesPerMs, type AgentSessionOptions, type AudioFormat } from '../agent-session.js';
import { SocketAgentSession } from '../socket-agent-session.js';
import { recordField, stringField } from '../wire-json.js';

/** Prefix of the marks this adapter places to learn how much of an item has played. */
const MARK_PREFIX = 'openai-played:';

/** Transcript events: name → [role, final]. GA names first, beta names after. */
const TRANSCRIPT_EVENTS: Record<string, ['caller' | 'agent', boolean]> = {
  'conversation.item.input_audio_transcription.completed': ['caller', true],
  'conversation.item.input_audio_transcription.delta': ['caller', false],
  'response.output_audio_transcript.done': ['agent', true],
  'response.output_audio_transcript.delta': ['agent', false],
  'response.audio_transcript.done': ['agent', true],
  'response.audio_transcript.delta': ['agent', false],
};

/** The assistant item being spoken: what was delivered and what the gateway says has played. */
interface SpokenItem {
  id: string;
  deliveredMs: number;
  /** Highest played position the gateway confirmed through a mark echo; -1 before any. */
  playedMs: number;
  /** Clock.monotonic() when its first audio was delivered. */
  firstAudioAt: number;
}

/** The OpenAI Realtime session. The "agent id" is the model name. */
export class OpenAiRealtimeSession extends SocketAgentSession {
  readonly inputFormat: AudioFormat = MULAW_8000;
  readonly outputFormat: AudioFormat = MULAW_8000;
  #item: SpokenItem | undefined;
  #marks = 0;

  constructor(options: AgentSessionOptions) {
    super('openai', options);
  }

  protected connect(): Promise<void> {
    const { endpoint, apiKey } = this.options;
    if (apiKey === undefined) throw new ProviderError(this.provider, 'rejected', 'an API key is required');
    const url = new URL(endpoint.url);
    if (!url.searchParams.has('model') && !url.searchParams.has('call_id')) url.searchParams.set('model', endpoint.externalAgentId);
    this.openSocket(url.toString(), { authorization: `Bearer ${apiKey}` });
    return Promise.resolve();
  }

  protected onOpen(): void {
    // GA session shape; pcmu is G.711 µ-law at 8 kHz, so audio passes through untranscoded.
    this.sendJson({
      type: 'session.update',
      session: {
        type: 'realtime',
        audio: {
          input: {
            format: { type: 'audio/pcmu' },
            transcription: { model: 'whisper-1' },
            turn_detection: { type: 'server_vad', interrupt_response: true, create_response: true },
          },
          output: { format: { type: 'audio/pcmu' } },
        },
      },
    });
  }

  protected onMessage(message: Record<string, unknown>): void {
    const type = stringField(message, 'type') ?? '(none)';
    switch (type) {
      case 'session.created': {
        const id = stringField(recordField(message, 'session'), 'id');
        if (id !== undefined) this.handlers.onConversationId?.(id);
        return;
      }
      case 'session.updated':
        this.ready();
        return;
      case 'response.output_audio.delta':
      case 'response.audio.delta':
        this.#onAudioDelta(stringField(message, 'item_id'), stringField(message, 'delta'));
        return;
      case 'input_audio_buffer.speech_started':
        this.#onSpeechStarted();
        return;
      case 'error':
        this.#onError(message);
        return;
      default:
        this.#maybeTranscript(type, message);
    }
  }

  protected writeAudio(frame: Buffer): void {
    this.sendJson({ type: 'input_audio_buffer.append', audio: frame.toString('base64') });
  }

  /** A mark echo: the item has played up to the position the mark was placed at. */
  override markPlayed(name: string): void {
    if (!name.startsWith(MARK_PREFIX) || !this.#item) return;
    const [itemId, ms] = splitMark(name.slice(MARK_PREFIX.length));
    if (itemId === this.#item.id && ms !== undefined) this.#item.playedMs = Math.max(this.#item.playedMs, ms);
  }

  #onAudioDelta(itemId: string | undefined, delta: string | undefined): void {
    if (itemId === undefined || delta === undefined) {
      this.log('warn', 'audio delta without item_id or delta; ignored');
      return;
    }
    if (this.#item?.id !== itemId) {
      this.#item = { id: itemId, deliveredMs: 0, playedMs: -1, firstAudioAt: this.options.clock.monotonic() };
    }
    const audio = Buffer.from(delta, 'base64');
    this.#item.deliveredMs += audio.length / bytesPerMs(this.outputFormat);
    this.handlers.onAudio?.(audio);
    this.#marks += 1;
    this.handlers.onMark?.(`${MARK_PREFIX}${itemId}:${Math.floor(this.#item.deliveredMs)}:${this.#marks}`);
  }

  /**
   * Barge-in. The server cancels the response itself (interrupt_response), but its copy of the
   * item still holds audio the caller never heard; truncating at the played position keeps the
   * model's context true to what was said.
   */
  #onSpeechStarted(): void {
    this.handlers.onClearAudio?.();
    const item = this.#item;
    this.#item = undefined;
    if (!item) return;
    // Without mark echoes, wall time since the first delta bounds what can have played.
    const played = item.playedMs >= 0 ? item.playedMs : this.options.clock.monotonic() - item.firstAudioAt;
    const audioEndMs = Math.max(0, Math.floor(Math.min(played, item.deliveredMs)));
    this.sendJson({ type: 'conversation.item.truncate', item_id: item.id, content_index: 0, audio_end_ms: audioEndMs });
  }

  #onError(message: Record<string, unknown>): void {
    const error = recordField(message, 'error');
    const code = stringField(error, 'code') ?? stringField(error, 'type') ?? 'unspecified';
    if (this.state === 'connecting') this.failStart('protocol', `error event before ready: ${code}`);
    else this.log('warn', 'platform error event', { code });
  }

  #maybeTranscript(type: string, message: Record<string, unknown>): void {
    const kind = TRANSCRIPT_EVENTS[type];
    if (!kind) {
      this.log('debug', 'event ignored', { type });
      return;
    }
    const text = stringField(message, kind[1] ? 'transcript' : 'delta');
    if (text !== undefined) this.handlers.onTranscript?.({ role: kind[0], text, final: kind[1] });
  }
}

/** "item:ms:n" → [item, ms]; item ids never contain ':' in the API, but split from the right anyway. */
function splitMark(rest: string): [string, number | undefined] {
  const parts = rest.split(':');
  if (parts.length < 3) return [rest, undefined];
  const ms = Number(parts[parts.length - 2]);
  return [parts.slice(0, -2).join(':'), Number.isFinite(ms) ? ms : undefined];
}

/** The `openai` session factory. */
export function openOpenAiRealtimeSession(options: AgentSessionOptions): OpenAiRealtimeSession {
  return new OpenAiRealtimeSession(options);
}
