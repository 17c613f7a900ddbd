/** @module Session timer negotiation and deadlines (RFC 4028), as pure functions over header values. */

/** RFC 4028 §4: the smallest allowed Session-Expires and the recommended default, in seconds. */
export const MIN_SE_FLOOR = 90;
export const DEFAULT_SESSION_EXPIRES = 1800;

/** Which side sends the refreshing re-INVITE or UPDATE. */
export type Refresher = 'uac' | 'uas';

/** A parsed `Session-Expires: delta;refresher=x` value. */
export interface SessionExpires {
  deltaSeconds: number;
  refresher?: Refresher;
}

/** Parses a Session-Expires value (compact form `x` is expanded by the message layer); undefined when malformed. */
export function parseSessionExpires(value: string | undefined): SessionExpires | undefined {
  if (value === undefined) return undefined;
  const m = /^\s*(\d{1,10})\s*(?:;(.*))?$/.exec(value);
  if (!m?.[1]) return undefined;
  const ref = /(?:^|;)\s*refresher\s*=\s*(uac|uas)\s*(?:;|$)/i.exec(m[2] ?? '');
  return { deltaSeconds: parseInt(m[1], 10), ...(ref?.[1] ? { refresher: ref[1].toLowerCase() as Refresher } : {}) };
}

export function formatSessionExpires(se: SessionExpires): string {
  return se.refresher ? `${se.deltaSeconds};refresher=${se.refresher}` : String(se.deltaSeconds);
}

/** The UAS decision on an incoming INVITE or UPDATE (RFC 4028 §9). */
export type UasSessionTimerDecision =
  | { kind: 'reject-422'; minSe: number }
  | { kind: 'accept'; sessionExpires: SessionExpires | undefined };

/**
 * RFC 4028 §9: a Session-Expires below our Min-SE gets 422 with our Min-SE; otherwise the 2xx
 * carries the interval and a refresher. When the UAC did not name one, we take `uas` only if the
 * UAC does not support timer (it could not refresh), else we let the UAC refresh (§9 lets the UAS pick).
 */
export function decideUasSessionTimer(
  requestSe: string | undefined,
  requestMinSe: string | undefined,
  uacSupportsTimer: boolean,
  localMinSe: number,
): UasSessionTimerDecision {
  const se = parseSessionExpires(requestSe);
  if (!se) return { kind: 'accept', sessionExpires: undefined };
  if (se.deltaSeconds < localMinSe) return { kind: 'reject-422', minSe: localMinSe };
  const theirMin = parseInt(requestMinSe ?? '0', 10) || 0;
  const delta = Math.max(se.deltaSeconds, theirMin, MIN_SE_FLOOR);
  const refresher = se.refresher ?? (uacSupportsTimer ? 'uac' : 'uas');
  return { kind: 'accept', sessionExpires: { deltaSeconds: delta, refresher } };
}

/** RFC 4028 §10: the refresher refreshes at half the interval. */
export function refreshAfterMs(deltaSeconds: number): number {
  return (deltaSeconds * 1000) / 2;
}

/** RFC 4028 §10: without a refresh, the other side sends BYE at SE minus min(32 s, SE/3). */
export function expireAfterMs(deltaSeconds: number): number {
  return (deltaSeconds - Math.min(32, deltaSeconds / 3)) * 1000;
}

/** RFC 4028 §7.4: after a 422 the UAC retries with Session-Expires raised to the Min-SE it got. */
export function retryAfter422(currentSe: number, minSeHeader: string | undefined): number | undefined {
  const minSe = parseInt(minSeHeader ?? '', 10);
  if (!Number.isFinite(minSe) || minSe <= currentSe) return undefined;
  return minSe;
}
