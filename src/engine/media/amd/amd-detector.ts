/**
 * @module Answering-machine detection on the callee's audio (docs/API.md "Answering-machine
 * detection"): the cadence of the greeting from the VAD (a person says a few words and waits, a
 * voicemail greeting talks on), the silence before it, and tones by Goertzel: the fax calling tone
 * (ITU-T T.30 CNG, 1100 Hz) and the beep that ends a greeting. Runs on 20 ms frames of 8 kHz PCM.
 */
import { nextAmdState, type AmdState } from './amd-state.js';

export type AmdResult = 'human' | 'machine' | 'fax' | 'unknown';

/** The decision: what answered, how long after the answer, and when a beep was heard (ms after the answer), if one was. */
export interface AmdDecision {
  result: AmdResult;
  decidedAfterMs: number;
  beepAtMs: number | null;
}

/** Thresholds (docs/CONFIGURATION.md "Answering-machine detection"). */
export interface AmdThresholds {
  /** Nothing heard for this long after the answer: `unknown`. */
  initialSilenceMs: number;
  /** A greeting still going after this long is a machine's; one that ended sooner a person's. */
  maxHumanGreetingMs: number;
  /** Silence that ends a greeting (shorter pauses are between words). */
  afterGreetingSilenceMs: number;
  /** Speech shorter than this at the start is a click or a breath, not a greeting. */
  minWordMs: number;
  /** A pure tone this long is a beep. */
  beepMs: number;
  /** The fax calling tone this long is a fax. */
  faxToneMs: number;
}

export const DEFAULT_AMD_THRESHOLDS: Readonly<AmdThresholds> = {
  initialSilenceMs: 4500, maxHumanGreetingMs: 2600, afterGreetingSilenceMs: 800, minWordMs: 100, beepMs: 160, faxToneMs: 300,
};

const FRAME_SAMPLES = 160;
const FRAME_MS = 20;
const RATE = 8000;
/** T.30 CNG and the answering fax's CED (V.21/T.30). */
const FAX_TONES = [1100, 2100];
/** Frequencies voicemail systems beep at (carriers' and handsets' own, 400 Hz to 2 kHz). */
const BEEP_TONES = [425, 440, 480, 500, 600, 620, 700, 800, 850, 900, 950, 1000, 1050, 1200, 1400, 1500, 1800, 2000];
/** Share of a frame's energy one tone must hold to count as a pure tone (speech spreads wider). */
const TONE_SHARE = 0.7;
/** Frames quieter than this (mean square, 16-bit) hold no tone: about -50 dBm0. */
const MIN_TONE_ENERGY = 1e4;

const coefficient = (f: number) => 2 * Math.cos((2 * Math.PI * f) / RATE);

export class AmdDetector {
  readonly #t: AmdThresholds;
  readonly #isSpeech: (frame: Int16Array) => boolean;
  readonly #onDecision: (decision: AmdDecision) => void;
  readonly #onBeep: (atMs: number) => void;
  #state: AmdState = 'listening';
  #decision: AmdDecision | null = null;
  #ms = 0;
  /** Where the greeting began, and its last speech frame's end (ms), once it began. */
  #greetingStart = -1;
  #lastSpeechEnd = -1;
  #speechRun = 0;
  #silenceRun = 0;
  #tone = -1;
  #toneRun = 0;
  #beepAt: number | null = null;

  constructor(o: { isSpeech: (frame: Int16Array) => boolean; thresholds?: Partial<AmdThresholds>; onDecision: (d: AmdDecision) => void; onBeep?: (atMs: number) => void }) {
    this.#t = { ...DEFAULT_AMD_THRESHOLDS, ...o.thresholds };
    this.#isSpeech = o.isSpeech;
    this.#onDecision = o.onDecision;
    this.#onBeep = o.onBeep ?? (() => undefined);
  }

  get decision(): AmdDecision | null {
    return this.#decision;
  }

  /** One 20 ms frame (160 samples) of the callee's audio, from the answer on. */
  write(frame: Int16Array): void {
    if (frame.length !== FRAME_SAMPLES) return;
    this.#ms += FRAME_MS;
    this.#tones(frame);
    if (this.#state === 'decided') return;
    if (this.#toneRun * FRAME_MS >= this.#t.faxToneMs && FAX_TONES.includes(this.#tone)) return this.#decide('fax');
    if (this.#beepAt !== null) return this.#decide('machine');
    this.#cadence(this.#isSpeech(frame));
  }

  #cadence(speech: boolean): void {
    const t = this.#t;
    if (speech) {
      this.#speechRun += FRAME_MS;
      this.#silenceRun = 0;
      if (this.#greetingStart < 0 && this.#speechRun >= t.minWordMs) this.#greetingStart = this.#ms - this.#speechRun;
      if (this.#greetingStart >= 0) this.#lastSpeechEnd = this.#ms;
    } else {
      this.#speechRun = 0;
      this.#silenceRun += FRAME_MS;
    }
    if (this.#greetingStart < 0) {
      if (this.#ms >= t.initialSilenceMs) this.#decide('unknown');
      return;
    }
    if (this.#ms - this.#greetingStart > t.maxHumanGreetingMs && this.#silenceRun < t.afterGreetingSilenceMs) return this.#decide('machine');
    if (this.#silenceRun >= t.afterGreetingSilenceMs) {
      this.#decide(this.#lastSpeechEnd - this.#greetingStart <= t.maxHumanGreetingMs ? 'human' : 'machine');
    }
  }

  /** Goertzel power of the strongest candidate tone; a run of frames on one tone dates a beep. */
  #tones(frame: Int16Array): void {
    let energy = 0;
    for (let i = 0; i < FRAME_SAMPLES; i++) energy += frame[i]! * frame[i]!;
    let best = -1;
    if (energy / FRAME_SAMPLES >= MIN_TONE_ENERGY) {
      for (const f of [...FAX_TONES, ...BEEP_TONES]) {
        const c = coefficient(f);
        let s1 = 0, s2 = 0;
        for (let i = 0; i < FRAME_SAMPLES; i++) {
          const s0 = frame[i]! + c * s1 - s2;
          s2 = s1;
          s1 = s0;
        }
        const power = s1 * s1 + s2 * s2 - c * s1 * s2;
        // A pure tone's power is energy * N / 2.
        if ((2 * power) / FRAME_SAMPLES >= energy * TONE_SHARE) {
          best = f;
          break;
        }
      }
    }
    if (best >= 0 && best === this.#tone) this.#toneRun++;
    else {
      this.#tone = best;
      this.#toneRun = best >= 0 ? 1 : 0;
    }
    if (this.#beepAt === null && BEEP_TONES.includes(this.#tone) && this.#toneRun * FRAME_MS >= this.#t.beepMs) {
      this.#beepAt = this.#ms - this.#toneRun * FRAME_MS;
      if (this.#decision) this.#decision.beepAtMs = this.#beepAt;
      this.#onBeep(this.#beepAt);
    }
  }

  #decide(result: AmdResult): void {
    this.#state = nextAmdState(this.#state, 'decide');
    this.#decision = { result, decidedAfterMs: this.#ms, beepAtMs: this.#beepAt };
    this.#onDecision(this.#decision);
  }
}
