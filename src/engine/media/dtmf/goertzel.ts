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
    const s1 = this.#s1;
    const s2 = this.#s2;
    const coeffs = this.#coeffs;
    for (let i = 0; i < pcm.length; i++) {
      const x = pcm[i]!;
      this.#energy += x * x;
      for (let k = 0; k < 8; k++) {
        const s0 = x + coeffs[k]! * s1[k]! - s2[k]!;
        s2[k] = s1[k]!;
        s1[k] = s0;
      }
      if (++this.#count === this.#blockSize) found = this.#endBlock() ?? found;
    }
    return found;
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
