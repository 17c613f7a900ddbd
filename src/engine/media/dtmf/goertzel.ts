/** @module In-band DTMF detection with the Goertzel algorithm, for carriers that send tones (ITU-T Q.24). */

/** Row (low group) and column (high group) frequencies of the DTMF keypad, ITU-T Q.23. */
const ROWS = [697, 770, 852, 941] as const;
const COLS = [1209, 1336, 1477, 1633] as const;
const KEYS = ['123A', '456B', '789C', '*0#D'] as const;

/** Thresholds of the detector; defaults follow common practice for Q.24 compliance. */
export interface DtmfDetectorOptions {
  sampleRate?: number;
  /** Samples per analysis block: 205 at 8 kHz gives bins about 39 Hz wide, enough to split the tones. */
  blockSize?: number;
  /** Minimum amplitude of each tone in 16-bit units (about -30 dBm0 for G.711 at 400). */
  minAmplitude?: number;
  /** Max dB the high group may be below the low group ("normal twist"). */
  normalTwistDb?: number;
  /** Max dB the low group may be below the high group ("reverse twist"). */
  reverseTwistDb?: number;
  /** Share of the block's energy the two tones must hold; speech spreads its energy wider. */
  minToneShare?: number;
  /** dB by which the strongest tone of a group must exceed the others of that group. */
  groupPeakDb?: number;
}

const dbToPower = (db: number): number => 10 ** (db / 10);

/**
 * A streaming detector: feed it PCM of any chunk size; it runs eight Goertzel filters over
 * fixed blocks and reports a digit once it is seen in two consecutive blocks (about 50 ms at
 * 8 kHz, above the 40 ms minimum of Q.24), and reports it again only after a block without it.
 * Keeps no sample buffer, so it allocates nothing per frame.
 */
export class GoertzelDtmfDetector {
  readonly #coeffs: Float64Array;
  readonly #s1 = new Float64Array(8);
  readonly #s2 = new Float64Array(8);
  readonly #blockSize: number;
  readonly #minPower: number;
  readonly #normalTwist: number;
  readonly #reverseTwist: number;
  readonly #minShare: number;
  readonly #groupPeak: number;
  #energy = 0;
  #count = 0;
  #candidate: string | null = null;
  #reported: string | null = null;

  constructor(options: DtmfDetectorOptions = {}) {
    const sampleRate = options.sampleRate ?? 8000;
    this.#blockSize = options.blockSize ?? Math.round((205 * sampleRate) / 8000);
    this.#coeffs = Float64Array.from([...ROWS, ...COLS], (f) => 2 * Math.cos((2 * Math.PI * f) / sampleRate));
    const amp = options.minAmplitude ?? 400;
    // A sine of amplitude A gives a Goertzel power of about (A * N / 2)^2.
    this.#minPower = ((amp * this.#blockSize) / 2) ** 2;
    this.#normalTwist = dbToPower(options.normalTwistDb ?? 8);
    this.#reverseTwist = dbToPower(options.reverseTwistDb ?? 4);
    this.#minShare = options.minToneShare ?? 0.6;
    this.#groupPeak = dbToPower(options.groupPeakDb ?? 6);
  }

  /** Feeds samples; returns a newly detected digit, or null. */
  process(pcm: Int16Array): string | null {
    let found: string | null = null;
    for (let from = 0; from < pcm.length;) {
      const to = Math.min(pcm.length, from + this.#blockSize - this.#count);
      this.#filter(pcm, from, to);
      this.#count += to - from;
      from = to;
      if (this.#count === this.#blockSize) found = this.#endBlock() ?? found;
    }
    return found;
  }

  /**
   * Runs the eight filters and the energy sum over `pcm[from, to)`. This runs on every caller
   * frame of a leg without telephone-event, so the state lives in locals for the span, the filters
   * unrolled: field and typed-array accesses per sample cost more than the arithmetic
   * (bench/media/bench-dtmf-detector.ts).
   */
  #filter(pcm: Int16Array, from: number, to: number): void {
    const c = this.#coeffs;
    const s1 = this.#s1;
    const s2 = this.#s2;
    const c0 = c[0]!, c1 = c[1]!, c2 = c[2]!, c3 = c[3]!, c4 = c[4]!, c5 = c[5]!, c6 = c[6]!, c7 = c[7]!;
    let a0 = s1[0]!, a1 = s1[1]!, a2 = s1[2]!, a3 = s1[3]!, a4 = s1[4]!, a5 = s1[5]!, a6 = s1[6]!, a7 = s1[7]!;
    let b0 = s2[0]!, b1 = s2[1]!, b2 = s2[2]!, b3 = s2[3]!, b4 = s2[4]!, b5 = s2[5]!, b6 = s2[6]!, b7 = s2[7]!;
    let energy = this.#energy;
    for (let i = from; i < to; i++) {
      const x = pcm[i]!;
      energy += x * x;
      let s0 = x + c0 * a0 - b0; b0 = a0; a0 = s0;
      s0 = x + c1 * a1 - b1; b1 = a1; a1 = s0;
      s0 = x + c2 * a2 - b2; b2 = a2; a2 = s0;
      s0 = x + c3 * a3 - b3; b3 = a3; a3 = s0;
      s0 = x + c4 * a4 - b4; b4 = a4; a4 = s0;
      s0 = x + c5 * a5 - b5; b5 = a5; a5 = s0;
      s0 = x + c6 * a6 - b6; b6 = a6; a6 = s0;
      s0 = x + c7 * a7 - b7; b7 = a7; a7 = s0;
    }
    s1[0] = a0; s1[1] = a1; s1[2] = a2; s1[3] = a3; s1[4] = a4; s1[5] = a5; s1[6] = a6; s1[7] = a7;
    s2[0] = b0; s2[1] = b1; s2[2] = b2; s2[3] = b3; s2[4] = b4; s2[5] = b5; s2[6] = b6; s2[7] = b7;
    this.#energy = energy;
  }

  #endBlock(): string | null {
    const digit = this.#classify();
    this.#s1.fill(0);
    this.#s2.fill(0);
    this.#energy = 0;
    this.#count = 0;
    let reported: string | null = null;
    if (digit !== null && digit === this.#candidate && digit !== this.#reported) {
      this.#reported = digit;
      reported = digit;
    }
    if (digit === null) this.#reported = null;
    this.#candidate = digit;
    return reported;
  }

  #power(k: number): number {
    const a = this.#s1[k]!;
    const b = this.#s2[k]!;
    return a * a + b * b - this.#coeffs[k]! * a * b;
  }

  /** The digit present in the block just finished, after level, twist, peak and share checks. */
  #classify(): string | null {
    const row = this.#strongest(0);
    const col = this.#strongest(4);
    if (row < 0 || col < 0) return null;
    const pr = this.#power(row);
    const pc = this.#power(col + 4);
    if (pr < this.#minPower || pc < this.#minPower) return null;
    if (pr > pc * this.#normalTwist || pc > pr * this.#reverseTwist) return null;
    // Tone energy over block energy: a pure pair gives (pr + pc) * 2 / N == energy.
    if (((pr + pc) * 2) / this.#blockSize < this.#energy * this.#minShare) return null;
    return KEYS[row]![col]!;
  }

  /** Index (0-3) of the group's strongest tone when it stands out from the other three; else -1. */
  #strongest(base: number): number {
    let best = -1;
    let bestPower = 0;
    for (let k = 0; k < 4; k++) {
      const p = this.#power(base + k);
      if (p > bestPower) {
        bestPower = p;
        best = k;
      }
    }
    for (let k = 0; k < 4; k++) {
      if (k !== best && this.#power(base + k) * this.#groupPeak > bestPower) return -1;
    }
    return best;
  }
}
