/**
 * @module The drain on SIGTERM (docs/RELIABILITY.md, "Drain"): the listener stays open so
 * `/readyz` can say 503 and new calls are refused, while live calls and requests in flight go on;
 * it ends as soon as nothing is left, or when `shutdown.drain_seconds` passes.
 */

export interface DrainWork {
  /** Calls still up (ringing or answered). */
  liveCalls(): number;
  /** HTTP requests whose response is not finished. */
  requestsInFlight(): number;
}

/** How often the drain looks again: short against a person's patience, long against the CPU. */
const POLL_MS = 100;

/** Resolves 'idle' once no call and no request is left, or 'timeout' after `drainMs`. */
export function waitForDrain(work: DrainWork, drainMs: number): Promise<'idle' | 'timeout'> {
  const started = Date.now();
  return new Promise((resolve) => {
    const look = (): void => {
      if (work.liveCalls() === 0 && work.requestsInFlight() === 0) return resolve('idle');
      if (Date.now() - started >= drainMs) return resolve('timeout');
      setTimeout(look, POLL_MS);
    };
    look();
  });
}
