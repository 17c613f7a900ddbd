/**
 * @module Signatures of event deliveries (docs/EVENTS.md "Verifying a delivery"): the header
 * `VGW-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, with one `v1` per
 * secret in force (two for the 24 hours after a rotation), and new endpoint secrets.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { randomBase62 } from '../common/ids.js';

export const SIGNATURE_HEADER = 'VGW-Signature';
export const EVENT_ID_HEADER = 'VGW-Event-Id';
export const EVENT_TYPE_HEADER = 'VGW-Event-Type';

/** How old a signed timestamp a receiver should still accept; the docs tell receivers the same. */
export const SIGNATURE_TOLERANCE_S = 300;

/** A new endpoint secret: `whsec_` and 40 base62 characters (238 bits). */
export const newEndpointSecret = (): string => `whsec_${randomBase62(40)}`;

const hmac = (secret: string, timestamp: number, body: string): string => createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');

/** The header value for `body` sent at `timestamp` (unix seconds), signed with every secret in force, newest first. */
export function signDelivery(secrets: readonly string[], timestamp: number, body: string): string {
  return [`t=${timestamp}`, ...secrets.map((secret) => `v1=${hmac(secret, timestamp, body)}`)].join(',');
}

export type SignatureCheck = { valid: true } | { valid: false; reason: 'malformed' | 'stale' | 'mismatch' };

/**
 * What a receiver does (and the tests, as one): parse the header, refuse a timestamp more than
 * `toleranceS` from `nowS`, and accept when any `v1` matches the secret, compared in constant time.
 */
export function verifyDelivery(header: string, secret: string, body: string, nowS: number, toleranceS = SIGNATURE_TOLERANCE_S): SignatureCheck {
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't' && /^\d{1,12}$/.test(value)) timestamp = Number(value);
    else if (key === 'v1' && /^[0-9a-f]{64}$/.test(value)) signatures.push(value);
  }
  if (timestamp === undefined || signatures.length === 0) return { valid: false, reason: 'malformed' };
  if (Math.abs(nowS - timestamp) > toleranceS) return { valid: false, reason: 'stale' };
  const expected = Buffer.from(hmac(secret, timestamp, body), 'hex');
  return signatures.some((s) => timingSafeEqual(Buffer.from(s, 'hex'), expected)) ? { valid: true } : { valid: false, reason: 'mismatch' };
}
