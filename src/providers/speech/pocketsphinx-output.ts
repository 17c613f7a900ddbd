/**
 * @module Parses what `pocketsphinx_continuous -time yes` prints on stdout: per utterance, the
 * hypothesis on one line, then one line per segment (word or filler) with its times in seconds of
 * the input audio. Debian 12 ships pocketsphinx 5prealpha, whose CLI prints text, not JSON:
 *
 * ```
 * hello world                  <- hypothesis (may be empty: noise with no words)
 * <s> 0.000 0.200 0.999700     <- segment: word, start s, end s, posterior probability
 * hello 0.210 0.530 0.725759
 * world(2) 0.540 0.980 0.99990 <- "(2)": the dictionary's second pronunciation
 * </s> 0.990 1.240 1.000000    <- end of the utterance
 * ```
 */
import type { RecognizedUtterance } from '../../engine/calls/ports.js';

/** A segment line: word, start, end, probability (the word holds no spaces). */
const SEGMENT = /^(\S+) (\d+(?:\.\d+)?) (\d+(?:\.\d+)?) (-?\d+(?:\.\d+)?(?:e-?\d+)?)$/;
/** Silence, sentence marks and noise models: `<s>`, `</s>`, `<sil>`, `[NOISE]`, `++BREATH++`. */
const FILLER = /^(<.*>|\[.*\]|\+\+.*\+\+)$/;
/** A line longer than this is not pocketsphinx output: it is dropped, so a runaway child cannot grow memory. */
export const MAX_LINE_CHARS = 8192;

interface Pending {
  /** The hypothesis line. */
  text: string;
  /** The segment words, alternate pronunciation marks removed. */
  words: string[];
  startMs: number | null;
  endMs: number;
}

/** Turns stdout chunks into utterances, each as soon as its closing `</s>` line is read. */
export class PocketsphinxOutputParser {
  #partial = '';
  #overflowing = false;
  #current: Pending | null = null;

  /** Feeds a chunk of stdout; returns the utterances it completed. */
  push(chunk: string): RecognizedUtterance[] {
    const done: RecognizedUtterance[] = [];
    const lines = (this.#partial + chunk).split('\n');
    this.#partial = lines.pop() ?? '';
    if (this.#partial.length > MAX_LINE_CHARS) {
      this.#partial = '';
      this.#overflowing = true;
    }
    for (const line of lines) {
      // The rest of an over-long line is dropped with it.
      if (this.#overflowing) {
        this.#overflowing = false;
        continue;
      }
      this.#line(line.replace(/\r$/, ''), done);
    }
    return done;
  }

  /** End of output: the utterance in progress, if its `</s>` never came. */
  end(): RecognizedUtterance[] {
    const done: RecognizedUtterance[] = [];
    if (this.#partial !== '' && !this.#overflowing) this.#line(this.#partial, done);
    this.#partial = '';
    this.#finish(done);
    return done;
  }

  #line(line: string, done: RecognizedUtterance[]): void {
    const segment = SEGMENT.exec(line);
    if (segment === null) {
      // A hypothesis starts a new utterance (the previous one ended without its `</s>`).
      this.#finish(done);
      this.#current = { text: line.trim().replace(/\s+/g, ' '), words: [], startMs: null, endMs: 0 };
      return;
    }
    const current = this.#current ?? (this.#current = { text: '', words: [], startMs: null, endMs: 0 });
    const word = segment[1]!;
    if (FILLER.test(word)) {
      if (word === '</s>') this.#finish(done);
      return;
    }
    current.startMs ??= Math.round(Number(segment[2]) * 1000);
    current.endMs = Math.round(Number(segment[3]) * 1000);
    current.words.push(word.replace(/\(\d+\)$/, ''));
  }

  #finish(done: RecognizedUtterance[]): void {
    const current = this.#current;
    this.#current = null;
    // Without its hypothesis line (an over-long line was dropped), the words make the text.
    const text = current === null ? '' : current.text || current.words.join(' ');
    if (current === null || text === '') return;
    const startMs = current.startMs ?? 0;
    done.push({ text, startMs, endMs: Math.max(startMs, current.endMs) });
  }
}
