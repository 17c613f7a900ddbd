/** @module The gateway's own transcript of one call: a recognition stream per party, fed the call's decoded audio, merged into turns. */
import type { Logger } from '../../../../common/logger.js';
import { createResampler, type AudioFrame, type RecordingChannel, type Resampler } from '../../../media/index.js';
import type { TranscriptTurn } from '../agent-side.js';
import type { RecognitionStream, SpeakerRole, SpeechRecognizer } from '../../ports.js';
import { AudioTimeline } from './audio-timeline.js';

/** The media layer's recording channels, named as transcript roles: the remote party is the caller. */
const ROLE_OF: Record<RecordingChannel, SpeakerRole> = { remote: 'caller', agent: 'agent' };

/** One party's stream, its resampler to the engine's rate, and where its audio fell in the call. */
interface ChannelStream {
  role: SpeakerRole;
  stream: RecognitionStream;
  resampler: Resampler;
  timeline: AudioTimeline;
  /** Samples written to the stream, at the engine's rate. */
  written: number;
}

/** The gateway's own transcription of answered calls (configuration `transcription`). */
export interface TranscriptionSettings {
  recognizer: SpeechRecognizer;
  /** The parties transcribed: one recognition stream each per call. */
  channels: readonly SpeakerRole[];
}

/** Options of {@link CallTranscriber.open}. */
export interface CallTranscriberOptions {
  settings: TranscriptionSettings;
  callId: string;
  /** Call time zero (Clock.monotonic at the answer): turns' `offset_s` count from it. */
  startedAt: number;
  log: Logger;
}

/**
 * Takes the same 8 kHz frames as the recording (channel `remote` is the caller), resamples them
 * to the engine's rate and writes them to that party's stream. Hold pauses every stream. At the
 * end the streams' utterances become turns, placed in call time and ordered by it.
 */
export class CallTranscriber {
  readonly #streams = new Map<RecordingChannel, ChannelStream>();
  readonly #sampleRate: number;
  readonly #startedAt: number;
  readonly #log: Logger;
  /** Parties whose engine failed: their audio is no longer written. */
  readonly #failed = new Set<RecordingChannel>();
  #paused = false;
  #closing: Promise<TranscriptTurn[]> | null = null;

  private constructor(options: CallTranscriberOptions) {
    this.#sampleRate = options.settings.recognizer.sampleRate;
    this.#startedAt = options.startedAt;
    this.#log = options.log;
  }

  /** Opens a stream per configured party; rejects only on a bug (an unsupported engine rate). */
  static async open(options: CallTranscriberOptions): Promise<CallTranscriber> {
    const transcriber = new CallTranscriber(options);
    const { recognizer, channels } = options.settings;
    for (const channel of ['remote', 'agent'] as const) {
      const role = ROLE_OF[channel];
      if (!channels.includes(role)) continue;
      const resampler = await createResampler(8000, recognizer.sampleRate);
      const stream = recognizer.open({
        callId: options.callId, role, sampleRate: recognizer.sampleRate,
        handlers: { onError: (message) => transcriber.#onError(channel, message) },
      });
      transcriber.#streams.set(channel, { role, stream, resampler, timeline: new AudioTimeline(), written: 0 });
    }
    options.log.debug({ engine: recognizer.name, channels }, 'transcription started');
    return transcriber;
  }

  get isPaused(): boolean {
    return this.#paused;
  }

  /** One 8 kHz frame of one party (the recording's channels). Ignored while paused and after close. */
  writeFrame(channel: RecordingChannel, frame: AudioFrame): void {
    const entry = this.#streams.get(channel);
    if (entry === undefined || this.#failed.has(channel) || this.#paused || this.#closing !== null) return;
    if (frame.sampleRate !== 8000) throw new RangeError(`transcription takes 8000 Hz frames, got ${frame.sampleRate}`);
    // The frame ended when it arrived.
    const heardAt = frame.receivedAt - (frame.pcm.length * 1000) / frame.sampleRate - this.#startedAt;
    entry.timeline.note((entry.written * 1000) / this.#sampleRate, heardAt);
    const pcm = entry.resampler.process(frame.pcm);
    entry.written += pcm.length;
    entry.stream.write(pcm);
  }

  /** Hold: every stream pauses (docs/API.md "Calls": transcription pauses with the recording). */
  pause(): void {
    if (this.#paused || this.#closing !== null) return;
    this.#paused = true;
    for (const entry of this.#streams.values()) entry.stream.pause();
  }

  resume(): void {
    if (!this.#paused || this.#closing !== null) return;
    this.#paused = false;
    for (const entry of this.#streams.values()) entry.stream.resume();
  }

  /** Ends every stream and returns the merged turns, ordered by `offset_s`. Idempotent, never rejects. */
  close(): Promise<TranscriptTurn[]> {
    this.#closing ??= this.#finish();
    return this.#closing;
  }

  async #finish(): Promise<TranscriptTurn[]> {
    const entries = [...this.#streams.values()];
    const perStream = await Promise.all(entries.map(async (entry) => {
      const utterances = await entry.stream.close().catch((err: unknown) => {
        this.#log.warn({ err, role: entry.role }, 'a recognition stream failed to close');
        return [];
      });
      entry.resampler.close();
      return utterances.map((u): TranscriptTurn => ({
        role: entry.role,
        text: u.text,
        offset_s: Math.max(0, Math.round(entry.timeline.callMsOf(u.startMs))) / 1000,
      }));
    }));
    return perStream.flat().sort((a, b) => a.offset_s - b.offset_s);
  }

  #onError(channel: RecordingChannel, message: string): void {
    if (this.#failed.has(channel)) return;
    this.#failed.add(channel);
    this.#log.warn({ role: ROLE_OF[channel], error: message }, 'speech recognition failed; the call goes on without it');
  }
}
