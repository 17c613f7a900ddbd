/**
 * @module Numbers out of SIP: the user part of a Request-URI, To or From URI, and the E.164 form
 * of a dialled number as a carrier writes it (docs/CONFIGURATION.md "Operator surface": each carrier's number format).
 */
import type { CarrierProfile } from './carrier-profile.js';

const E164 = /^\+[1-9][0-9]{1,14}$/;

/**
 * The user part of a SIP URI (RFC 3261 19.1.1), percent-decoded, or '' when it has none. A
 * telephone-subscriber user may carry its own parameters after ';' (RFC 3966 3), dropped here.
 * Accepts a bare URI or a name-addr (`"Bob" <sip:+1555@host>;tag=x`).
 */
export function uriUser(uri: string): string {
  const match = /<?sips?:([^@>;]*)(?:;[^@>]*)?@/i.exec(uri);
  if (!match?.[1]) return '';
  const user = match[1];
  try {
    return decodeURIComponent(user);
  } catch {
    return user;
  }
}

/**
 * The E.164 form of a number in a SIP user part, or null when it is not a telephone number.
 * Visual separators of RFC 3966 5.1.1 are ignored; a number without '+' is read in the carrier's
 * format: national numbers get the carrier's country code, others are taken as E.164 without '+'.
 */
export function toE164(user: string, carrier: Pick<CarrierProfile, 'numberFormat' | 'countryCode'>): string | null {
  const plain = user.replace(/[\s\-.()]/g, '');
  if (plain.startsWith('+')) return E164.test(plain) ? plain : null;
  if (!/^[0-9]+$/.test(plain)) return null;
  const digits = carrier.numberFormat === 'national' && carrier.countryCode ? `${carrier.countryCode}${plain.replace(/^0+/, '')}` : plain;
  const e164 = `+${digits}`;
  return E164.test(e164) ? e164 : null;
}
