/**
 * @module The engine's heartbeat: a file in the data folder whose modification time the running
 * engine moves forward every few seconds. After a crash it says when the engine was last alive,
 * which is when the calls it carried ended as far as anyone can tell (start-up recovery).
 */
import { closeSync, openSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock, TimerHandle } from '../../../common/clock.js';

/** The heartbeat file, in the data folder. */
export const HEARTBEAT_FILE = 'engine.heartbeat';
/** How often the file is touched: the most a crashed call can be over-billed by, when it has no recording. */
export const HEARTBEAT_INTERVAL_MS = 5_000;

/** When the last engine over `dataDir` was last known alive, in epoch ms; null when no engine ran. */
export function lastHeartbeatMs(dataDir: string): number | null {
  try {
    return statSync(join(dataDir, HEARTBEAT_FILE)).mtimeMs;
  } catch {
    return null;
  }
}

/** Touches the heartbeat file now and every {@link HEARTBEAT_INTERVAL_MS} until stopped. */
export class Heartbeat {
  readonly #file: string;
  readonly #clock: Clock;
  readonly #onError: (err: Error) => void;
  #timer: TimerHandle | null = null;
  #failing = false;

  /** `onError` hears of the first failure to touch the file after a success (not of every beat). */
  constructor(dataDir: string, clock: Clock, onError: (err: Error) => void) {
    this.#file = join(dataDir, HEARTBEAT_FILE);
    this.#clock = clock;
    this.#onError = onError;
  }

  start(): void {
    this.#beat();
  }

  stop(): void {
    this.#timer?.cancel();
    this.#timer = null;
  }

  #beat(): void {
    const now = new Date(this.#clock.now());
    // One utimes syscall every few seconds (an open the first time). A failure (disk full, folder
    // gone) must not stop calls: the next beat tries again, and recovery errs on the late side.
    try {
      try {
        utimesSync(this.#file, now, now);
      } catch {
        closeSync(openSync(this.#file, 'a'));
        utimesSync(this.#file, now, now);
      }
      this.#failing = false;
    } catch (err) {
      if (!this.#failing) this.#onError(err as Error);
      this.#failing = true;
    }
    this.#timer = this.#clock.setTimeout(() => this.#beat(), HEARTBEAT_INTERVAL_MS);
  }
}
