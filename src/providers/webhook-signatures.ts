/**
 * @module What the vendors' post-call webhook signatures share (docs/WEBHOOKS.md): an HMAC over
 * the raw body bytes, compared in constant time, and the bounded header reading. Each vendor's
 * own rule is in its folder (`elevenlabs/`, `retell/`, `vapi/` `webhook-signature.ts`).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * `missing`: no (parsable) signature header; `stale`: signed outside the time tolerance;
 * `invalid`: the MAC does not match. Only `valid` may be ingested when a secret is configured.
 */
export type SignatureOutcome = 'valid' | 'invalid' | 'stale' | 'missing';

/** A signature header longer than this is not a signature (it would only cost hashing time). */
export const MAX_HEADER_LENGTH = 1024;

export const asBytes = (body: Buffer | string): Buffer => (typeof body === 'string' ? Buffer.from(body, 'utf8') : body);

export function hmac(algorithm: 'sha1' | 'sha256' | 'sha512', secret: string | Buffer, ...parts: (Buffer | string)[]): Buffer {
  const mac = createHmac(algorithm, secret);
  for (const part of parts) mac.update(asBytes(part));
  return mac.digest();
}

/** Constant-time comparison of a MAC against its received encoding; malformed encodings never match. */
export function macMatches(expected: Buffer, received: string, encoding: 'hex' | 'base64'): boolean {
  const pattern = encoding === 'hex' ? /^[0-9a-fA-F]+$/ : /^[A-Za-z0-9+/]+={0,2}$/;
  if (!pattern.test(received)) return false;
  const decoded = Buffer.from(received, encoding);
  // timingSafeEqual needs equal lengths; the length of a MAC is public, so checking it first leaks nothing.
  return decoded.length === expected.length && timingSafeEqual(decoded, expected);
}

/** `k=v` pairs of a comma-separated header; later duplicates are kept in order. */
export function headerPairs(header: string): [string, string][] {
  return header.split(',').map((part) => {
    const eq = part.indexOf('=');
    return eq < 0 ? [part.trim(), ''] : [part.slice(0, eq).trim(), part.slice(eq + 1).trim()];
  });
}

/** A decimal timestamp as the vendors send it. */
export const DIGITS = /^\d{1,16}$/;
