/** @module Retell's post-call webhook signature (docs/WEBHOOKS.md). */
import { DIGITS, MAX_HEADER_LENGTH, asBytes, headerPairs, hmac, macMatches, type SignatureOutcome } from '../webhook-signatures.js';

export const RETELL_TOLERANCE_MS = 5 * 60 * 1000;

/**
 * `x-retell-signature: v=<unix ms>,d=<hex HMAC-SHA256(webhook key, raw body + "<ms>")>` (body
 * first, then the decimal timestamp, no separator, as the Retell SDK's `webhook_auth.ts` signs),
 * refused when |now - v| exceeds 5 minutes.
 */
export function verifyRetellSignature(rawBody: Buffer | string, header: string | undefined, secret: string, nowMs: number): SignatureOutcome {
  if (!header || header.length > MAX_HEADER_LENGTH) return 'missing';
  const pairs = headerPairs(header);
  const v = pairs.find(([k]) => k === 'v')?.[1];
  const d = pairs.find(([k]) => k === 'd')?.[1];
  if (v === undefined || !DIGITS.test(v) || !d) return 'missing';
  if (Math.abs(nowMs - Number(v)) > RETELL_TOLERANCE_MS) return 'stale';
  const expected = hmac('sha256', secret, asBytes(rawBody), v);
  return macMatches(expected, d, 'hex') ? 'valid' : 'invalid';
}
