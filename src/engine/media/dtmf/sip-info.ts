/**
 * @module DTMF carried in SIP INFO requests, as carriers and PBXs configured for out-of-band
 * signalling send it instead of RFC 4733 packets. Two bodies are in use:
 *
 * ```
 * Content-Type: application/dtmf-relay      Content-Type: application/dtmf
 *
 * Signal=5                                   5
 * Duration=160
 * ```
 *
 * `application/dtmf-relay` is the de facto format (from Cisco gateways; no RFC defines it):
 * lines of `name=value`, where Signal is the key pressed and Duration its length in ms. The
 * signal is a key character (0-9, *, #, A-D) or, from some senders, the RFC 4733 event number
 * (10 for *, 11 for #, 12 to 15 for A to D). `application/dtmf` carries the key alone.
 */
import { dtmfDigit } from './rfc4733.js';

/** The key in `value`: a key character, or an RFC 4733 event number; null for anything else. */
function keyOf(value: string): string | null {
  const v = value.trim().toUpperCase();
  if (/^[0-9*#A-D]$/.test(v)) return v;
  return /^1[0-5]$/.test(v) ? dtmfDigit(Number(v)) : null;
}

/** The key an INFO body signals, or null when the body is not DTMF (or not a key we know). */
export function dtmfFromInfo(contentType: string | undefined, body: Buffer): string | null {
  const type = contentType?.split(';')[0]?.trim().toLowerCase();
  const text = body.toString('latin1');
  if (type === 'application/dtmf') return keyOf(text);
  if (type !== 'application/dtmf-relay') return null;
  const signal = /^\s*signal\s*=\s*(\S+)\s*$/im.exec(text);
  return signal ? keyOf(signal[1]!) : null;
}
