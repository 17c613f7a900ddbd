/** @module Maps time in a recognition stream's audio (hold and RTP gaps squeezed out) back to time in the call. */

/** A stream position and the call time its audio arrived at. */
interface Anchor {
  streamMs: number;
  callMs: number;
}

/** Disagreement beyond which a frame starts a new anchor: a hold, a pause in RTP, a source change. */
export const REANCHOR_MS = 200;
/** Anchors kept per stream; past it the last one stretches, so a pathological call cannot grow it without end. */
export const MAX_ANCHORS = 4096;

/**
 * A recognition stream hears only the audio it is given, back to back: its clock stops during
 * hold and whenever no packets arrive. Each write notes where it falls in the stream and when it
 * arrived; a write that does not continue the previous anchor's line starts a new one.
 */
export class AudioTimeline {
  readonly #anchors: Anchor[] = [];

  /** Records that the stream's audio at `streamMs` was heard at `callMs` into the call. */
  note(streamMs: number, callMs: number): void {
    const last = this.#anchors.at(-1);
    if (last !== undefined) {
      const predicted = last.callMs + (streamMs - last.streamMs);
      if (Math.abs(callMs - predicted) <= REANCHOR_MS || this.#anchors.length >= MAX_ANCHORS) return;
    }
    this.#anchors.push({ streamMs, callMs });
  }

  /** The call time of a stream position: from the last anchor at or before it. */
  callMsOf(streamMs: number): number {
    let found: Anchor | undefined;
    for (const anchor of this.#anchors) {
      if (anchor.streamMs > streamMs) break;
      found = anchor;
    }
    found ??= this.#anchors[0];
    return found === undefined ? streamMs : found.callMs + (streamMs - found.streamMs);
  }

  get anchors(): number {
    return this.#anchors.length;
  }
}
