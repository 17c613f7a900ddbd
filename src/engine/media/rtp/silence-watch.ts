/** @module Media timeout: notices when a stream has been silent for too long, once per silence. */
import type { Clock, TimerHandle } from '../../../common/clock.js';

/**
 * Tracks when a stream was last heard and, once {@link start}ed, calls `onSilence` once when
 * nothing was heard for `timeoutMs` (0 disables it), counted from the start at the earliest. The
 * next packet heard starts watching again. One timer per silence period, not per packet: a packet
 * only stores its time.
 */
export class SilenceWatch {
  /** Monotonic time the stream was last heard (or the watch was made). */
  lastHeardAt: number;
  /** The longest time between two packets heard (call quality); 0 until two were. */
  longestGapMs = 0;
  #heardAny = false;
  #timer: TimerHandle | null = null;
  #silent = false;
  #watching = false;
  /** When {@link start} was called: silence before it does not count. */
  #since = 0;

  constructor(
    private readonly clock: Clock,
    private readonly timeoutMs: number,
    private readonly onSilence: () => void,
  ) {
    this.lastHeardAt = clock.monotonic();
  }

  /** Starts watching from now (a call answered after a long ring is not timed out at once). */
  start(): void {
    if (this.timeoutMs <= 0 || this.#watching) return;
    this.#watching = true;
    this.#silent = false;
    this.#since = this.clock.monotonic();
    this.#arm(this.timeoutMs);
  }

  heard(now: number): void {
    if (this.#heardAny && now - this.lastHeardAt > this.longestGapMs) this.longestGapMs = now - this.lastHeardAt;
    this.#heardAny = true;
    this.lastHeardAt = now;
    if (this.#silent) {
      this.#silent = false;
      this.#arm(this.timeoutMs);
    }
  }

  stop(): void {
    this.#watching = false;
    this.#silent = false;
    this.#timer?.cancel();
    this.#timer = null;
  }

  #arm(ms: number): void {
    this.#timer = this.clock.setTimeout(() => {
      const silent = this.clock.monotonic() - Math.max(this.lastHeardAt, this.#since);
      if (silent >= this.timeoutMs) {
        this.#silent = true;
        this.onSilence();
      } else {
        // At least 1 ms, a timer's granularity: a packet counted in arrears (see RtpSession's
        // relayed records) is heard at a fractional time, and `lastHeardAt + timeoutMs` can then
        // round to a remainder of a few picoseconds, which would re-arm at the same instant forever.
        this.#arm(Math.max(1, this.timeoutMs - silent));
      }
    }, ms);
  }
}
