/**
 * @module What an answered call writes beside its media: the gateway's recording (a stereo WAV,
 * docs/API.md "Calls") and its own transcription. Neither may fail the call: one that cannot
 * open or finish is logged and the call goes on without it.
 */
import type { Clock } from '../../../common/clock.js';
import type { RecordingFiles } from '../../../common/recording-files.js';
import { StereoWavRecorder } from '../../media/index.js';
import type { Call } from '../call.js';
import { recordingPathOf } from '../ending/recovery.js';
import type { TranscriptTurn } from './agent-side.js';
import type { RecordingPort } from './recording-port.js';
import { CallAudioTap } from './transcription/call-audio-tap.js';
import { CallTranscriber, type TranscriptionSettings } from './transcription/call-transcriber.js';

/** What a call's outputs use. */
export interface CallOutputsDeps {
  clock: Clock;
  /** Where recordings go (`<tenant>/<call>.wav`). */
  recordings: Pick<RecordingFiles, 'writable'>;
  /** The gateway's own speech recognition of answered calls; absent or null when off. */
  transcription?: TranscriptionSettings | null;
}

export class CallOutputs {
  readonly #deps: CallOutputsDeps;
  readonly #call: Call;
  #recorder: StereoWavRecorder | null = null;
  #recordingPath = '';
  #transcriber: CallTranscriber | null = null;

  constructor(deps: CallOutputsDeps, call: Call) {
    this.#deps = deps;
    this.#call = call;
  }

  /** The open recording, until it is closed. */
  get recorder(): StereoWavRecorder | null {
    return this.#recorder;
  }

  /** The gateway's transcription, until it is closed. */
  get transcriber(): CallTranscriber | null {
    return this.#transcriber;
  }

  /** What the agent side feeds: the recording, or with transcription on both through one tap. */
  get feed(): RecordingPort | null {
    return this.#transcriber ? new CallAudioTap(this.#recorder, this.#transcriber) : this.#recorder;
  }

  /** The engine naming the transcription in the `session` view, or null when off. */
  get transcriptionEngine(): string | null {
    return this.#deps.transcription?.recognizer.name ?? null;
  }

  /** Opens the recording when the call asks for one, then the transcription unless `wanted` says the call is ending already. */
  async open(answeredAt: number, wanted: () => boolean): Promise<void> {
    if (this.#call.snapshot().record) this.#recorder = await this.#openRecorder();
    if (this.#deps.transcription && wanted()) this.#transcriber = await this.#openTranscriber(answeredAt);
  }

  /** Closes both; the gateway's transcript turns (none without transcription). */
  async close(): Promise<TranscriptTurn[]> {
    const [, turns] = await Promise.all([this.#closeRecorder(), this.#closeTranscriber()]);
    return turns;
  }

  /** The gateway's own recognizer on this call when configured; a failure to start it never fails the call. */
  async #openTranscriber(answeredAt: number): Promise<CallTranscriber | null> {
    const settings = this.#deps.transcription;
    if (!settings || settings.channels.length === 0) return null;
    try {
      return await CallTranscriber.open({ settings, callId: this.#call.id, startedAt: answeredAt, log: this.#call.log });
    } catch (err) {
      this.#call.log.error({ err }, 'cannot start transcription; the call goes on without it');
      return null;
    }
  }

  /** The gateway's own transcript (docs/API.md "Calls" `GET /v1/calls/{id}/transcript`, source `gateway`), once its streams are closed. */
  async #closeTranscriber(): Promise<TranscriptTurn[]> {
    const transcriber = this.#transcriber;
    this.#transcriber = null;
    if (!transcriber) return [];
    try {
      const turns = await transcriber.close();
      this.#call.log.debug({ turns: turns.length }, 'gateway transcript done');
      return turns;
    } catch (err) {
      this.#call.log.error({ err }, 'cannot finish the gateway transcript');
      return [];
    }
  }

  async #openRecorder(): Promise<StereoWavRecorder | null> {
    const relative = recordingPathOf(this.#call.snapshot());
    try {
      const file = await this.#deps.recordings.writable(relative);
      const recorder = await StereoWavRecorder.open({ path: file, clock: this.#deps.clock });
      this.#recordingPath = relative;
      // Ended while the file opened (a BYE right after the answer): the end waits for this and closes it.
      return recorder;
    } catch (err) {
      // A call is worth more than its recording: go on without one, and say so.
      this.#call.log.error({ err }, 'cannot open the recording; the call goes on unrecorded');
      return null;
    }
  }

  async #closeRecorder(): Promise<void> {
    const recorder = this.#recorder;
    this.#recorder = null;
    if (!recorder) return;
    try {
      await recorder.close();
      this.#call.setRecordingPath(this.#recordingPath);
    } catch (err) {
      this.#call.log.error({ err }, 'cannot finish the recording');
    }
  }
}
