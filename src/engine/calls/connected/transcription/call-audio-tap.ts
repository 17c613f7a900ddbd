/** @module Hands the call's decoded audio, as the agent sides give it to the recording, to the recording and the transcriber both. */
import type { AudioFrame, AudioSink, RecordingChannel, StereoWavRecorder } from '../../../media/index.js';
import type { RecordingPort } from '../recording-port.js';
import type { CallTranscriber } from './call-transcriber.js';


/**
 * Stands where the recorder stands: every frame, pause and resume goes to the recording (when the
 * call is recorded) and then to the transcriber. Hold reaches both through the agent side's
 * pause, exactly as it reaches the recording alone.
 */
export class CallAudioTap implements RecordingPort {
  readonly #recorder: StereoWavRecorder | null;
  readonly #transcriber: CallTranscriber;

  constructor(recorder: StereoWavRecorder | null, transcriber: CallTranscriber) {
    this.#recorder = recorder;
    this.#transcriber = transcriber;
  }

  writeFrame(channel: RecordingChannel, frame: AudioFrame): void {
    this.#recorder?.writeFrame(channel, frame);
    this.#transcriber.writeFrame(channel, frame);
  }

  channelSink(channel: RecordingChannel): AudioSink {
    return {
      writeFrame: (frame) => this.writeFrame(channel, frame),
      describe: () => `record and transcribe(${channel})`,
      close: () => {},
    };
  }

  pause(): void {
    this.#recorder?.pause();
    this.#transcriber.pause();
  }

  resume(): void {
    this.#recorder?.resume();
    this.#transcriber.resume();
  }
}
