/** @module ElevenLabs' post-call webhook signature (docs/WEBHOOKS.md). */
import { DIGITS, MAX_HEADER_LENGTH, asBytes, headerPairs, hmac, macMatches, type SignatureOutcome } from '../webhook-signatures.js';

export const ELEVENLABS_TOLERANCE_MS = 30 * 60 * 1000;

/**
 * `ElevenLabs-Signature: t=<unix seconds>,v0=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`, refused
 * when `t` is more than 30 minutes away from `nowMs` (the vendor SDK checks only the past; a
 * timestamp far in the future is refused too, so a leaked signature cannot be banked).
 */
export function verifyElevenLabsSignature(rawBody: Buffer | string, header: string | undefined, secret: string, nowMs: number): SignatureOutcome {
  if (!header || header.length > MAX_HEADER_LENGTH) return 'missing';
  const pairs = headerPairs(header);
  const t = pairs.find(([k]) => k === 't')?.[1];
  const signatures = pairs.filter(([k]) => k === 'v0').map(([, v]) => v);
  if (t === undefined || !DIGITS.test(t) || signatures.length === 0) return 'missing';
  if (Math.abs(nowMs - Number(t) * 1000) > ELEVENLABS_TOLERANCE_MS) return 'stale';
  const expected = hmac('sha256', secret, t, '.', asBytes(rawBody));
  return signatures.some((s) => macMatches(expected, s, 'hex')) ? 'valid' : 'invalid';
}
