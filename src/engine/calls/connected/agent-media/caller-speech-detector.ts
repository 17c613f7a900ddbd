/** @module Caller voice activity on the agent leg: WebRTC VAD behind an echo guard that ignores the agent's own audio coming back. */
import { VadStage, WebRtcVad, type AudioFrame, type VadMode } from '../../../media/index.js';
import { CARRIER_RATE, FRAME_MS } from './agent-audio-format.js';

/** A change in whether the caller is speaking. */
export type CallerSpeechEvent = 'start' | 'stop';

/** Tuning of {@link CallerSpeechDetector}; every field has a default. */
export interface CallerSpeechOptions {
  /** libfvad aggressiveness. Default 3: a false barge-in cuts the agent off, a late one costs ~20 ms. */
  vadMode?: VadMode;
  /** Speech needed before `start`. Default 60 ms. */
  onsetMs?: number;
  /** Non-speech needed before `stop`. Default 400 ms. */
  hangoverMs?: number;
  /** Decisions ignored while the VAD learns the line's noise (call start, after hold). Default 200 ms. */
  warmupMs?: number;
  /**
   * Echo return loss the carrier path is assumed to have at least: caller audio quieter than the
   * loudest recent playout minus this is taken for echo. Default 6 dB (the Geigel detector's
   * usual threshold of one half); `Infinity` turns the guard off.
   */
  echoReturnLossDb?: number;
  /** How far back the echo of a played frame may arrive. Default 300 ms. */
  echoWindowMs?: number;
}

/** Counters for the leg's stats. */
export interface CallerSpeechStats {
  speechStarts: number;
  speechStops: number;
  /** 20 ms caller frames muted before the VAD because the agent's playout explains them. */
  echoFrames: number;
}

/** Mean square of a frame (energy per sample); compared as ratios, so no log per frame. */
function meanSquare(pcm: Int16Array): number {
  let sum = 0;
  for (let i = 0; i < pcm.length; i++) sum += pcm[i]! * pcm[i]!;
  return pcm.length === 0 ? 0 : sum / pcm.length;
}

const FRAME_SAMPLES = (CARRIER_RATE * FRAME_MS) / 1000;

/**
 * Speech start and stop of the carrier party, at 8 kHz, fed with the caller's audio and with
 * every frame the leg plays out.
 *
 * Echo guard. Carriers and handsets return the agent's own audio, delayed (about 20-300 ms) and
 * attenuated by the echo return loss (ERL). A VAD cannot tell that from the caller, so each
 * 20 ms caller frame is first compared with the playout: it is taken for echo, and muted for the
 * VAD only, when its energy is below the highest playout frame energy of the echo window reduced
 * by the assumed ERL. This is the Geigel double-talk rule (near end louder than half the far-end
 * peak, i.e. -6 dB) on frame energies instead of sample peaks, so one stray sample does not
 * decide. It costs one sum of squares per frame and a max over 15 numbers. The price: a caller
 * who speaks more than the ERL below the agent's level is not heard until the agent pauses.
 */
export class CallerSpeechDetector {
  readonly stats: CallerSpeechStats = { speechStarts: 0, speechStops: 0, echoFrames: 0 };
  readonly #vad: WebRtcVad;
  readonly #options: CallerSpeechOptions;
  readonly #onEvent: (event: CallerSpeechEvent) => void;
  /** Linear factor applied to playout energy: 10^(-ERL/10). */
  readonly #echoFactor: number;
  /** Playout frame energies of the echo window, a ring indexed by frame count. */
  readonly #played: Float64Array;
  #playedCount = 0;
  readonly #frame: AudioFrame = { pcm: new Int16Array(FRAME_SAMPLES), sampleRate: CARRIER_RATE, timestamp: 0, receivedAt: 0 };
  readonly #muted: AudioFrame = { pcm: new Int16Array(FRAME_SAMPLES), sampleRate: CARRIER_RATE, timestamp: 0, receivedAt: 0 };
  #fill = 0;
  #samples = 0;
  #stage: VadStage;
  #speaking = false;
  #paused = false;

  private constructor(vad: WebRtcVad, options: CallerSpeechOptions, onEvent: (event: CallerSpeechEvent) => void) {
    this.#vad = vad;
    this.#options = options;
    this.#onEvent = onEvent;
    this.#echoFactor = 10 ** (-(options.echoReturnLossDb ?? 6) / 10);
    this.#played = new Float64Array(Math.max(1, Math.ceil((options.echoWindowMs ?? 300) / FRAME_MS)));
    this.#stage = this.#newStage();
  }

  static async create(options: CallerSpeechOptions, onEvent: (event: CallerSpeechEvent) => void): Promise<CallerSpeechDetector> {
    const vad = await WebRtcVad.create({ sampleRate: CARRIER_RATE, frameMs: FRAME_MS, mode: options.vadMode ?? 3 });
    return new CallerSpeechDetector(vad, options, onEvent);
  }

  get isSpeaking(): boolean {
    return this.#speaking;
  }

  /** One frame the leg sent to the carrier (agent audio, hold music or silence). */
  notePlayout(pcm: Int16Array): void {
    this.#played[this.#playedCount++ % this.#played.length] = meanSquare(pcm);
  }

  /** Decoded caller audio at 8 kHz, any length; `now` is monotonic ms. Ignored while paused. */
  writeCaller(pcm: Int16Array, now: number): void {
    if (this.#paused) return;
    const frame = this.#frame.pcm;
    for (let i = 0; i < pcm.length; ) {
      const n = Math.min(FRAME_SAMPLES - this.#fill, pcm.length - i);
      frame.set(pcm.subarray(i, i + n), this.#fill);
      this.#fill += n;
      i += n;
      if (this.#fill === FRAME_SAMPLES) this.#classify(now);
    }
  }

  /**
   * Hold: the caller's speech, if any, ends here (the agent hears nothing until unhold), and the
   * partial frame is dropped.
   */
  pause(): void {
    if (this.#paused) return;
    this.#paused = true;
    this.#fill = 0;
    if (this.#speaking) this.#report('stop');
  }

  /** Unhold: a fresh onset, warm-up and noise estimate, since the line may have changed meanwhile. */
  resume(): void {
    if (!this.#paused) return;
    this.#paused = false;
    this.#vad.reset();
    this.#stage = this.#newStage();
  }

  close(): void {
    this.#vad.close();
  }

  #classify(now: number): void {
    this.#fill = 0;
    const isEcho = meanSquare(this.#frame.pcm) < this.#echoFactor * this.#loudestPlayout();
    if (isEcho) this.stats.echoFrames++;
    // Echo becomes digital silence, which libfvad neither flags nor learns its noise estimate from.
    const frame = isEcho ? this.#muted : this.#frame;
    frame.timestamp = this.#samples >>> 0;
    frame.receivedAt = now;
    this.#samples += FRAME_SAMPLES;
    this.#stage.writeFrame(frame);
  }

  #loudestPlayout(): number {
    let max = 0;
    const played = this.#played;
    for (let i = 0; i < played.length; i++) if (played[i]! > max) max = played[i]!;
    return max;
  }

  #newStage(): VadStage {
    // The stage never closes the VAD: it is shared by the stages created at each resume.
    return new VadStage(this.#vad, {
      onsetMs: this.#options.onsetMs ?? 60,
      hangoverMs: this.#options.hangoverMs ?? 400,
      warmupMs: this.#options.warmupMs ?? 200,
      onEvent: (event) => {
        if (!this.#paused) this.#report(event.type === 'speech-start' ? 'start' : 'stop');
      },
    });
  }

  #report(event: CallerSpeechEvent): void {
    if ((event === 'start') === this.#speaking) return;
    this.#speaking = event === 'start';
    if (this.#speaking) this.stats.speechStarts++;
    else this.stats.speechStops++;
    this.#onEvent(event);
  }
}
