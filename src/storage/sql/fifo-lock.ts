/**
 * @module A first-in first-out lock over a single connection: work that finds it free runs at
 * once (synchronously, so SQLite statements keep their order and cost), work that finds it held
 * waits its turn. The SQLite adapter holds it for the whole of an asynchronous transaction, so a
 * statement issued meanwhile from elsewhere does not run inside that transaction.
 */
export class FifoLock {
  #held = false;
  readonly #waiting: (() => void)[] = [];

  /** Whether nothing holds the lock and nothing waits for it. */
  get isFree(): boolean {
    return !this.#held && this.#waiting.length === 0;
  }

  /** Resolves once the lock is this caller's; it must call {@link release} exactly once. */
  acquire(): Promise<void> {
    if (this.isFree) {
      this.#held = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#held = false;
  }

  /** Runs `work` now when the lock is free, else once every earlier holder and waiter is done. */
  run<T>(work: () => T): Promise<T> {
    if (this.isFree) {
      try {
        return Promise.resolve(work());
      } catch (err) {
        return Promise.reject(err instanceof Error ? err : new Error(String(err)));
      }
    }
    return this.acquire().then(() => {
      try {
        return work();
      } finally {
        this.release();
      }
    });
  }
}
