/** @module Calls a function every frame interval against the monotonic clock, by absolute deadline. */
import type { Clock, TimerHandle } from '../../../common/clock.js';

/** Frames the pacer emits at once after a stall before it gives up catching up. */
const MAX_CATCH_UP = 5;

/**
 * Emits frame n at `start + n * interval`. Each timer is set for the next absolute deadline, so
 * timer lateness never accumulates the way chained `setTimeout(interval)` calls do (each of those
 * adds its own lateness, about 1 ms per frame under load, so a 20 ms stream drifts by seconds per
 * minute). After a long stall it emits the missed frames at once, up to {@link MAX_CATCH_UP},
 * then re-bases the schedule rather than flooding the far end.
 */
export class FramePacer {
  readonly #clock: Clock;
  readonly #intervalMs: number;
  readonly #onFrame: (frameIndex: number) => void;
  #startMs = 0;
  #next = 0;
  #timer: TimerHandle | null = null;

  constructor(clock: Clock, intervalMs: number, onFrame: (frameIndex: number) => void) {
    this.#clock = clock;
    this.#intervalMs = intervalMs;
    this.#onFrame = onFrame;
  }

  get running(): boolean {
    return this.#timer !== null;
  }

  /** Starts emitting; frame 0 goes out immediately. */
  start(): void {
    if (this.#timer) return;
    this.#startMs = this.#clock.monotonic();
    this.#next = 0;
    this.#tick();
  }

  stop(): void {
    this.#timer?.cancel();
    this.#timer = null;
  }

  #tick(): void {
    const now = this.#clock.monotonic();
    let due = Math.floor((now - this.#startMs) / this.#intervalMs) - this.#next + 1;
    if (due > MAX_CATCH_UP) {
      this.#startMs += (due - MAX_CATCH_UP) * this.#intervalMs;
      due = MAX_CATCH_UP;
    }
    this.#timer = { cancel: () => undefined };
    for (let i = 0; i < due && this.#timer !== null; i++) this.#onFrame(this.#next++);
    if (this.#timer === null) return;
    const deadline = this.#startMs + this.#next * this.#intervalMs;
    this.#timer = this.#clock.setTimeout(() => this.#tick(), deadline - this.#clock.monotonic());
  }
}
