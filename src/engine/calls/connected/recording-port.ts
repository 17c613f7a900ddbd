/** @module What the agent sides, the transfer and the transcription tap call on a call's recording. */
import type { Clock } from '../../../common/clock.js';
import type { AudioFrame, RecordingChannel, StereoWavRecorder } from '../../media/index.js';

/** The recorder's feeding methods: the recording itself, or a tap that also feeds transcription. */
export type RecordingPort = Pick<StereoWavRecorder, 'writeFrame' | 'channelSink' | 'pause' | 'resume'>;

/** Writes PCM of one rate into a recording's channels through one reused frame: nothing is allocated per packet. */
export class RecordingFeed {
  readonly #recorder: RecordingPort;
  readonly #clock: Clock;
  readonly #frame: AudioFrame;

  constructor(recorder: RecordingPort, clock: Clock, sampleRate: number) {
    this.#recorder = recorder;
    this.#clock = clock;
    this.#frame = { pcm: new Int16Array(0), sampleRate, timestamp: 0, receivedAt: 0 };
  }

  write(channel: RecordingChannel, pcm: Int16Array, timestamp: number): void {
    const frame = this.#frame;
    frame.pcm = pcm;
    frame.timestamp = timestamp;
    frame.receivedAt = this.#clock.monotonic();
    this.#recorder.writeFrame(channel, frame);
  }

  pause(): void {
    this.#recorder.pause();
  }

  resume(): void {
    this.#recorder.resume();
  }
}
