/**
 * @module Runs the post-call work of one call one task at a time. Storing a delivery checks what
 * the call already has, writes a recording file, then stores; with the file written through
 * fs/promises another delivery of the same call could run between the check and the store, so the
 * tasks of one call wait for each other (docs/WEBHOOKS.md "First attribution wins"). Tasks of
 * different calls never wait for each other.
 */

export class PerCallQueue {
  /** The last task of each call with work queued or running; removed once it settles. */
  readonly #tails = new Map<string, Promise<void>>();

  /** Runs `task` after every task queued before it for `key`; settles as the task does. */
  run<T>(key: string, task: () => T | Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const result = previous.then(task);
    // A failed task (already reported to its own caller) does not hold back the next one.
    const tail = result.then(() => undefined, () => undefined);
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }

  /** Calls with work queued or running (a bounded map: entries leave when their last task settles). */
  get size(): number {
    return this.#tails.size;
  }
}
