/** @module Sources of generated audio (hold music, prompts) that the bridge paces onto a leg. */

/** Produces 16-bit PCM at 8 kHz on demand. */
export interface AudioSource {
  /** Fills `out` and returns the samples written; fewer than `out.length` means the source ended. */
  read(out: Int16Array): number;
  describe(): string;
}

/** Plays a PCM buffer (for example a hold-music file decoded at start-up) over and over. */
export class LoopingPcmSource implements AudioSource {
  readonly #samples: Int16Array;
  readonly #name: string;
  #position = 0;

  constructor(samples: Int16Array, name = 'pcm') {
    if (samples.length === 0) throw new RangeError('a looping source needs at least one sample');
    this.#samples = samples;
    this.#name = name;
  }

  read(out: Int16Array): number {
    for (let i = 0; i < out.length; i++) {
      out[i] = this.#samples[this.#position]!;
      this.#position = (this.#position + 1) % this.#samples.length;
    }
    return out.length;
  }

  describe(): string {
    return `looping ${this.#name} (${this.#samples.length} samples)`;
  }
}

/** Endless silence: what a held leg hears when there is no hold music, so its RTP keeps flowing. */
export class SilenceSource implements AudioSource {
  read(out: Int16Array): number {
    out.fill(0);
    return out.length;
  }

  describe(): string {
    return 'silence';
  }
}
