/** @module Injected time source, so timers and expiries can be driven by tests. */

/** A handle returned by {@link Clock.setTimeout}. */
export interface TimerHandle {
  cancel(): void;
}

/** Wall-clock and monotonic time plus timers. Production uses {@link systemClock}. */
export interface Clock {
  /** Milliseconds since the Unix epoch (wall clock, for timestamps and expiries). */
  now(): number;
  /** Monotonic milliseconds with sub-millisecond precision (for pacing and latency). */
  monotonic(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimeout(fn, ms) {
    const t = setTimeout(fn, ms);
    return { cancel: () => clearTimeout(t) };
  },
};

/** A clock that only moves when told to. Timers fire in due order during {@link FakeClock.advance}. */
export class FakeClock implements Clock {
  #now: number;
  #mono = 0;
  #timers: { at: number; fn: () => void; seq: number }[] = [];
  #seq = 0;

  constructor(startMs = Date.UTC(2026, 0, 1)) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  monotonic(): number {
    return this.#mono;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer = { at: this.#mono + Math.max(0, ms), fn, seq: this.#seq++ };
    this.#timers.push(timer);
    return { cancel: () => { this.#timers = this.#timers.filter((t) => t !== timer); } };
  }

  /** Moves time forward by `ms`, firing every timer that falls due, in order. */
  advance(ms: number): void {
    const end = this.#mono + ms;
    for (;;) {
      const due = this.#timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.#timers = this.#timers.filter((t) => t !== due);
      this.#now += due.at - this.#mono;
      this.#mono = due.at;
      due.fn();
    }
    this.#now += end - this.#mono;
    this.#mono = end;
  }
}
