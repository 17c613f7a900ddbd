/**
 * @module The conversions between a carrier leg and an agent link, created together once the
 * link's formats are final and freed together: the caller-audio encoder, the agent-audio decoder
 * and the caller-speech detector. Each may hold WASM memory (resamplers, the VAD), so every one
 * created is closed, also when a later one fails to start (docs/ARCHITECTURE.md "Media ownership").
 */
import type { AgentLink } from '../../ports.js';
import { AgentAudioDecoder, CallerAudioEncoder } from './agent-audio-format.js';
import { CallerSpeechDetector, type CallerSpeechEvent, type CallerSpeechOptions } from './caller-speech-detector.js';

export class AgentConversions {
  readonly encoder: CallerAudioEncoder;
  readonly decoder: AgentAudioDecoder;
  readonly speech: CallerSpeechDetector;

  private constructor(encoder: CallerAudioEncoder, decoder: AgentAudioDecoder, speech: CallerSpeechDetector) {
    this.encoder = encoder;
    this.decoder = decoder;
    this.speech = speech;
  }

  /** Rejects (a bug) when the link declares a format that cannot be converted; nothing stays allocated then. */
  static async create(link: Pick<AgentLink, 'inputFormat' | 'outputFormat'>, o: {
    toAgent: (frame: Buffer) => void; toCarrier: (pcm8: Int16Array) => void;
    speechOptions: CallerSpeechOptions; onSpeech: (event: CallerSpeechEvent) => void;
  }): Promise<AgentConversions> {
    const encoder = await CallerAudioEncoder.create(link.inputFormat, o.toAgent);
    const decoder = await AgentAudioDecoder.create(link.outputFormat, o.toCarrier).catch((error: unknown) => {
      encoder.close();
      throw error;
    });
    const speech = await CallerSpeechDetector.create(o.speechOptions, o.onSpeech).catch((error: unknown) => {
      encoder.close();
      decoder.close();
      throw error;
    });
    return new AgentConversions(encoder, decoder, speech);
  }

  close(): void {
    this.encoder.close();
    this.decoder.close();
    this.speech.close();
  }
}
