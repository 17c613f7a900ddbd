/** @module Vapi's post-call webhook signature, an HMAC credential (docs/WEBHOOKS.md). */
import { DIGITS, MAX_HEADER_LENGTH, asBytes, hmac, macMatches, type SignatureOutcome } from '../webhook-signatures.js';

export const VAPI_DEFAULT_TOLERANCE_MS = 5 * 60 * 1000;

/** A Vapi HMAC credential (openapi `HMACAuthenticationPlan`), as configured in the Vapi dashboard. */
export interface VapiHmacPlan {
  secret: string;
  /** Defaults to sha256. */
  algorithm?: 'sha1' | 'sha256' | 'sha512';
  /** Defaults to hex. */
  signatureEncoding?: 'hex' | 'base64';
  /** For example `sha256=`; stripped before comparing. */
  signaturePrefix?: string;
  /** Vapi's `includeTimestamp` (default true): sign `{timestamp}.{body}`, else `{body}` alone. */
  includeTimestamp?: boolean;
  /** Vapi's `secretIsBase64`. */
  secretIsBase64?: boolean;
  toleranceMs?: number;
}

/**
 * Vapi's default HMAC plan: `x-signature` = HMAC(secret, "{timestamp}.{body}") with the timestamp
 * from `x-timestamp`. Vapi does not document the timestamp's unit; a value above 10^11 is read as
 * milliseconds, anything else as seconds. Custom `payloadFormat` templates other than these two
 * are not supported.
 */
export function verifyVapiSignature(
  rawBody: Buffer | string,
  signatureHeader: string | undefined,
  timestampHeader: string | undefined,
  plan: VapiHmacPlan,
  nowMs: number,
): SignatureOutcome {
  if (!signatureHeader || signatureHeader.length > MAX_HEADER_LENGTH) return 'missing';
  const prefix = plan.signaturePrefix ?? '';
  if (!signatureHeader.startsWith(prefix)) return 'invalid';
  const key = plan.secretIsBase64 ? Buffer.from(plan.secret, 'base64') : plan.secret;
  const algorithm = plan.algorithm ?? 'sha256';
  let expected: Buffer;
  if (plan.includeTimestamp ?? true) {
    const ts = timestampHeader?.trim();
    if (ts === undefined || !DIGITS.test(ts)) return 'missing';
    const tsMs = Number(ts) > 1e11 ? Number(ts) : Number(ts) * 1000;
    if (Math.abs(nowMs - tsMs) > (plan.toleranceMs ?? VAPI_DEFAULT_TOLERANCE_MS)) return 'stale';
    expected = hmac(algorithm, key, ts, '.', asBytes(rawBody));
  } else {
    expected = hmac(algorithm, key, asBytes(rawBody));
  }
  return macMatches(expected, signatureHeader.slice(prefix.length).trim(), plan.signatureEncoding ?? 'hex') ? 'valid' : 'invalid';
}
