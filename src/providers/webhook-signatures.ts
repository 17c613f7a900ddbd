/**
 * @module Post-call webhook signatures (docs/WEBHOOKS.md "Post-call webhooks", optional hardening): ElevenLabs
 * `ElevenLabs-Signature`, Retell `x-retell-signature` and a Vapi HMAC credential, each an
 * HMAC over the raw body bytes compared in constant time.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * `missing`: no (parsable) signature header; `stale`: signed outside the time tolerance;
 * `invalid`: the MAC does not match. Only `valid` may be ingested when a secret is configured.
 */
export type SignatureOutcome = 'valid' | 'invalid' | 'stale' | 'missing';

export const ELEVENLABS_TOLERANCE_MS = 30 * 60 * 1000;
export const RETELL_TOLERANCE_MS = 5 * 60 * 1000;
export const VAPI_DEFAULT_TOLERANCE_MS = 5 * 60 * 1000;

/** A signature header longer than this is not a signature (it would only cost hashing time). */
const MAX_HEADER_LENGTH = 1024;

const asBytes = (body: Buffer | string): Buffer => (typeof body === 'string' ? Buffer.from(body, 'utf8') : body);

function hmac(algorithm: 'sha1' | 'sha256' | 'sha512', secret: string | Buffer, ...parts: (Buffer | string)[]): Buffer {
  const mac = createHmac(algorithm, secret);
  for (const part of parts) mac.update(asBytes(part));
  return mac.digest();
}

/** Constant-time comparison of a MAC against its received encoding; malformed encodings never match. */
function macMatches(expected: Buffer, received: string, encoding: 'hex' | 'base64'): boolean {
  const pattern = encoding === 'hex' ? /^[0-9a-fA-F]+$/ : /^[A-Za-z0-9+/]+={0,2}$/;
  if (!pattern.test(received)) return false;
  const decoded = Buffer.from(received, encoding);
  // timingSafeEqual needs equal lengths; the length of a MAC is public, so checking it first leaks nothing.
  return decoded.length === expected.length && timingSafeEqual(decoded, expected);
}

/** `k=v` pairs of a comma-separated header; later duplicates are kept in order. */
function headerPairs(header: string): [string, string][] {
  return header.split(',').map((part) => {
    const eq = part.indexOf('=');
    return eq < 0 ? [part.trim(), ''] : [part.slice(0, eq).trim(), part.slice(eq + 1).trim()];
  });
}

const DIGITS = /^\d{1,16}$/;

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
