/**
 * @module Answering-machine detection on an answered outbound call (docs/API.md
 * "Answering-machine detection"): the remote party's decoded audio, from the answer on, in 20 ms
 * frames through the media layer's detector with its own VAD. The decision goes on the call record
 * and to the agent as the `amd` extension event.
 */
import { AmdDetector, WebRtcVad, type AmdDecision, type AmdThresholds } from '../../../media/index.js';

const FRAME_SAMPLES = 160;
const FRAME_MS = 20;

export class CallAmd {
  readonly #vad: WebRtcVad;
  readonly #detector: AmdDetector;
  /** Samples of a frame not yet complete (carriers may send 10 or 30 ms packets). */
  readonly #frame = new Int16Array(FRAME_SAMPLES);
  #filled = 0;
  #closed = false;
  /** After the decision, the end of the greeting: silence this long (see {@link watchGreetingEnd}). */
  #greetingEnd: { silenceMs: number; silentMs: number; onEnd: () => void } | null = null;

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
        const decided = this.#detector.decision !== null;
        this.#detector.write(this.#frame);
        // The detector stops asking the VAD once decided: from then on the watch does.
        if (decided) this.#watchFrame();
      }
    }
  }

  /**
   * Calls `onEnd` once the callee has been silent for `silenceMs` after the decision: the end of a
   * voicemail greeting with no beep (docs/API.md "Answering-machine detection", `wait_for_beep`).
   */
  watchGreetingEnd(silenceMs: number, onEnd: () => void): void {
    this.#greetingEnd = { silenceMs, silentMs: 0, onEnd };
  }

  #watchFrame(): void {
    const watch = this.#greetingEnd;
    if (watch === null) return;
    watch.silentMs = this.#vad.isSpeech(this.#frame) ? 0 : watch.silentMs + FRAME_MS;
    if (watch.silentMs < watch.silenceMs) return;
    this.#greetingEnd = null;
    watch.onEnd();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#vad.close();
  }
}
