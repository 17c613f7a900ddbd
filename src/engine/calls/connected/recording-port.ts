/** @module What the agent sides, the transfer and the transcription tap call on a call's recording. */
import type { StereoWavRecorder } from '../../media/index.js';

/** The recorder's feeding methods: the recording itself, or a tap that also feeds transcription. */
export type RecordingPort = Pick<StereoWavRecorder, 'writeFrame' | 'channelSink' | 'pause' | 'resume'>;
