/** @module 491 Request Pending back-off (RFC 3261 §14.1). */

/**
 * RFC 3261 §14.1: after a 491 the UAC waits, in units of 10 ms, a random time between 2.1 s and
 * 4 s when it owns the Call-ID (generated it), else between 0 and 2 s, then retries if still wanted.
 */
export function glareBackoffMs(ownsCallId: boolean, random: () => number = Math.random): number {
  const [lo, hi] = ownsCallId ? [210, 400] : [0, 200];
  return (lo + Math.floor(random() * (hi - lo + 1))) * 10;
}
