/**
 * @module Time-outs for the waits of test helpers: a wait that can never end turns a broken
 * behaviour into a hung run with no message; these turn it into a failure naming what was awaited.
 * The bounds are hang guards, generous on a loaded machine, never timing checks.
 */

/** The error every helper wait rejects with when its time is up. */
export function timedOut(what: string, ms: number): Error {
  return new Error(`timed out after ${ms} ms waiting for ${what}`);
}

/** Settles as `promise` does, or rejects with {@link timedOut} after `ms`. */
export function withDeadline<T>(what: string, promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timedOut(what, ms)), ms);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}
