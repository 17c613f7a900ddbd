/**
 * @module When a failed delivery is tried again (docs/EVENTS.md "Retries"): exponential back-off
 * from 5 s, doubling up to one hour between attempts, with full jitter over the upper half so
 * that endpoints coming back from an outage are not hit by every gateway at once, for 24 hours
 * after the event; then the event is failed for that endpoint.
 */

export const FIRST_RETRY_MS = 5_000;
export const MAX_RETRY_INTERVAL_MS = 3_600_000;
/** How long after an event it may still be delivered. */
export const RETRY_WINDOW_MS = 24 * 3_600_000;

/**
 * The time of the next attempt after attempt number `attempt` (1 for the first) failed at `nowMs`
 * for an event created at `createdMs`, or null when the window is over. `random` is in [0, 1).
 */
export function nextAttemptAt(attempt: number, nowMs: number, createdMs: number, random: () => number = Math.random): number | null {
  const ceiling = Math.min(MAX_RETRY_INTERVAL_MS, FIRST_RETRY_MS * 2 ** Math.min(attempt - 1, 20));
  const at = nowMs + Math.round(ceiling / 2 + random() * (ceiling / 2));
  return at - createdMs > RETRY_WINDOW_MS ? null : at;
}
