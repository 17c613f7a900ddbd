/**
 * @module Answering-machine detection on an answered outbound call (docs/API.md
 * "Answering-machine detection"): the remote party's decoded audio, from the answer on, in 20 ms
 * frames through the media layer's detector with its own VAD. The decision goes on the call record
 * and to the agent as the `amd` extension event.
 */
import { AmdDetector, WebRtcVad, type AmdDecision, type AmdThresholds } from '../../../media/index.js';

const FRAME_SAMPLES = 160;

export class CallAmd {
  readonly #vad: WebRtcVad;
  readonly #detector: AmdDetector;
  /** Samples of a frame not yet complete (carriers may send 10 or 30 ms packets). */
  readonly #frame = new Int16Array(FRAME_SAMPLES);
  #filled = 0;
  #closed = false;

  private constructor(vad: WebRtcVad, thresholds: Partial<AmdThresholds>, onDecision: (d: AmdDecision) => void, onBeep: (d: AmdDecision) => void) {
    this.#vad = vad;
    this.#detector = new AmdDetector({
      isSpeech: (frame) => vad.isSpeech(frame), thresholds, onDecision,
      onBeep: () => { if (this.#detector.decision) onBeep(this.#detector.decision); },
    });
  }

  static async start(thresholds: Partial<AmdThresholds>, onDecision: (d: AmdDecision) => void, onBeep: (d: AmdDecision) => void): Promise<CallAmd> {
    // Mode 3, as the caller-speech detector: line noise must not read as a greeting.
    const vad = await WebRtcVad.create({ sampleRate: 8000, frameMs: 20, mode: 3 });
    return new CallAmd(vad, thresholds, onDecision, onBeep);
  }

  /** The remote party's audio at 8 kHz, any packet size. */
  write(pcm: Int16Array): void {
    if (this.#closed) return;
    for (let i = 0; i < pcm.length;) {
      const n = Math.min(FRAME_SAMPLES - this.#filled, pcm.length - i);
      this.#frame.set(pcm.subarray(i, i + n), this.#filled);
      this.#filled += n;
      i += n;
      if (this.#filled === FRAME_SAMPLES) {
        this.#filled = 0;
        this.#detector.write(this.#frame);
      }
    }
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#vad.close();
  }
}
