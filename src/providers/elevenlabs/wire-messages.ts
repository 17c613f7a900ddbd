/**
 * @module ElevenLabs Agents Platform conversation WebSocket messages, as this gateway uses them.
 * Protocol: https://elevenlabs.io/docs/agents-platform/api-reference/agents-platform/websocket
 * (AsyncAPI `agent.asyncapi.yaml` in elevenlabs/packages).
 */
import { PCM16_16000, MULAW_8000, type AudioFormat } from '../agent-session.js';
import { numberField, recordField, stringField } from '../wire-json.js';

/** Client → server: caller audio. The one client message without a `type` field. */
export interface UserAudioChunk {
  user_audio_chunk: string;
}

/** Client → server: the answer to a `ping`, carrying its event id. */
export interface Pong {
  type: 'pong';
  event_id: number;
}

/** Client → server: first message after open. Audio formats cannot be overridden here. */
export interface ConversationInitiationClientData {
  type: 'conversation_initiation_client_data';
  dynamic_variables?: Record<string, string>;
}

/** Server → client messages this adapter acts on, after validation. */
export type ServerMessage =
  | { type: 'conversation_initiation_metadata'; conversationId: string; userInputFormat: string; agentOutputFormat: string }
  | { type: 'audio'; audioBase64: string; eventId: number }
  | { type: 'interruption'; eventId: number }
  | { type: 'ping'; eventId: number }
  | { type: 'user_transcript'; text: string; final: boolean }
  | { type: 'agent_response'; text: string }
  | { type: 'error'; message: string }
  | { type: 'other'; name: string };

/** Reads one server message; `other` for types this adapter ignores or shapes it cannot read. */
export function readServerMessage(message: Record<string, unknown>): ServerMessage {
  const type = stringField(message, 'type') ?? '(none)';
  switch (type) {
    case 'conversation_initiation_metadata': {
      const event = recordField(message, 'conversation_initiation_metadata_event');
      const conversationId = stringField(event, 'conversation_id');
      // Both formats default to pcm_16000 on the agent (GET agent: conversation_config.asr/tts).
      const userInputFormat = stringField(event, 'user_input_audio_format') ?? 'pcm_16000';
      const agentOutputFormat = stringField(event, 'agent_output_audio_format') ?? 'pcm_16000';
      return conversationId === undefined ? { type: 'other', name: type } : { type, conversationId, userInputFormat, agentOutputFormat };
    }
    case 'audio': {
      const event = recordField(message, 'audio_event');
      const audioBase64 = stringField(event, 'audio_base_64');
      const eventId = numberField(event, 'event_id');
      return audioBase64 === undefined || eventId === undefined ? { type: 'other', name: type } : { type, audioBase64, eventId };
    }
    case 'interruption':
    case 'ping': {
      const eventId = numberField(recordField(message, type === 'ping' ? 'ping_event' : 'interruption_event'), 'event_id');
      return eventId === undefined ? { type: 'other', name: type } : { type, eventId };
    }
    case 'user_transcript':
    case 'tentative_user_transcript': {
      const event = recordField(message, type === 'user_transcript' ? 'user_transcription_event' : 'tentative_user_transcription_event');
      const text = stringField(event, 'user_transcript');
      return text === undefined ? { type: 'other', name: type } : { type: 'user_transcript', text, final: type === 'user_transcript' };
    }
    case 'agent_response': {
      const text = stringField(recordField(message, 'agent_response_event'), 'agent_response');
      return text === undefined ? { type: 'other', name: type } : { type, text };
    }
    case 'error': {
      const event = recordField(message, 'error_event');
      return { type, message: stringField(event, 'message') ?? stringField(event, 'error_type') ?? 'unspecified' };
    }
    default:
      return { type: 'other', name: type };
  }
}

/**
 * The agent's declared audio format (`ulaw_8000` or `pcm_<rate>`, 16-bit LE mono) as an
 * AudioFormat; undefined for a format this gateway does not carry.
 */
export function audioFormatOf(name: string): AudioFormat | undefined {
  if (name === 'ulaw_8000') return MULAW_8000;
  if (name === 'pcm_16000') return PCM16_16000;
  const match = /^pcm_(8000|22050|24000|44100|48000)$/.exec(name);
  return match ? Object.freeze({ encoding: 'pcm16', sampleRate: Number(match[1]) }) : undefined;
}
