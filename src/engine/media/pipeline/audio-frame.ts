/** @module The PCM frame that flows through audio taps, pipelines and agent bridges. */

/**
 * A block of mono 16-bit linear PCM, usually 20 ms (160 samples at 8 kHz). Frames are emitted by
 * the bridge's taps and consumed by recording, VAD, transcription and agent bridges. Consumers
 * that keep a frame beyond the call that delivered it must copy `pcm`: producers may reuse it.
 */
export interface AudioFrame {
  /** Samples, mono, host byte order. */
  pcm: Int16Array;
  /** Samples per second: 8000, 16000, 24000 or 48000. */
  sampleRate: number;
  /** RTP timestamp of the first sample (RFC 3550 §5.1), in `sampleRate` units for PCM taps. */
  timestamp: number;
  /** Monotonic milliseconds (Clock.monotonic) when the audio arrived or was generated. */
  receivedAt: number;
}

/** Samples in one frame of `ms` milliseconds at `sampleRate`. */
export function samplesPerFrame(sampleRate: number, ms = 20): number {
  return (sampleRate * ms) / 1000;
}

/** Duration of a frame in milliseconds. */
export function frameDurationMs(frame: AudioFrame): number {
  return (frame.pcm.length * 1000) / frame.sampleRate;
}
