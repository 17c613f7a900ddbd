/** @module Media timeout: notices when a stream has been silent for too long, once per silence. */
import type { Clock, TimerHandle } from '../../../common/clock.js';

/**
 * Tracks when a stream was last heard and calls `onSilence` once when nothing was heard for
 * `timeoutMs` (0 disables it). The next packet heard starts watching again. One timer per
 * silence period, not per packet: a packet only stores its time.
 */
export class SilenceWatch {
  /** Monotonic time the stream was last heard (or the watch started). */
  lastHeardAt: number;
  #timer: TimerHandle | null = null;
  #silent = false;

  constructor(
    private readonly clock: Clock,
    private readonly timeoutMs: number,
    private readonly onSilence: () => void,
  ) {
    this.lastHeardAt = clock.monotonic();
    if (timeoutMs > 0) this.#arm(timeoutMs);
  }

  heard(now: number): void {
    this.lastHeardAt = now;
    if (this.#silent) {
      this.#silent = false;
      this.#arm(this.timeoutMs);
    }
  }

  stop(): void {
    this.#timer?.cancel();
    this.#timer = null;
  }

  #arm(ms: number): void {
    this.#timer = this.clock.setTimeout(() => {
      const silent = this.clock.monotonic() - this.lastHeardAt;
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
