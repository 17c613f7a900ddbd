/**
 * @module The caller of an inbound call, per RFC 3325 and RFC 3323 (docs/DECISIONS.md "Caller
 * identity and privacy"): the number for the call record, whether the caller asked for privacy,
 * and what of it the sip_trunk agent edge, a peer outside the gateway's trust domain, may learn.
 */
import type { SipRequest } from '../../sip/index.js';
import type { CarrierProfile } from './carrier-profile.js';
import { toE164, uriUser } from './dialled-number.js';

/** Privacy values (RFC 3323 §4.2, RFC 3325 §9.3) that ask to hide who is calling. */
const HIDING = new Set(['id', 'user', 'header', 'critical']);

export interface CallerIdentity {
  /** The call record's `from`: E.164, a non-numeric user part as sent, or `anonymous`. */
  number: string;
  /** The caller asked for privacy: a Privacy value that hides the identity, or an anonymous From. */
  private: boolean;
  /** The number a trusted carrier asserted (P-Asserted-Identity), E.164; null otherwise. */
  asserted: string | null;
  /** The request's Diversion values (RFC 5806), in order. */
  diversion: string[];
  /** What the carrier's STIR/SHAKEN verification service said (docs/API.md "Caller verification"). */
  verification: { verstat: string | null; identityHeader: boolean };
}

/**
 * The `verstat` parameter (3GPP TS 24.229 §7.2A.20, ATIS-1000074 §5.3.1) of the first
 * P-Asserted-Identity, else of From: a tel URI parameter, so in a sip URI with user=phone it sits
 * in the user part (`sip:+15550100;verstat=TN-Validation-Passed@host`), though some carriers put it
 * among the URI parameters. Its value is a token (RFC 3261 25.1), kept as sent.
 */
export function verstatOf(request: SipRequest): string | null {
  for (const value of [...request.headers.getAll('P-Asserted-Identity'), request.headers.get('From') ?? '']) {
    const uri = /<([^>]*)>/.exec(value)?.[1] ?? value.split(';tag=')[0] ?? '';
    const verstat = /;verstat=([A-Za-z0-9\-.!%*_+`'~]{1,64})/i.exec(uri)?.[1];
    if (verstat) return verstat;
  }
  return null;
}

/** The first tel: or sip: number among the P-Asserted-Identity values (RFC 3325 §9.1 allows one of each). */
function assertedNumber(request: SipRequest, carrier: Pick<CarrierProfile, 'numberFormat' | 'countryCode'>): string | null {
  for (const value of request.headers.getAll('P-Asserted-Identity')) {
    const tel = /<?tel:([^>;]+)/i.exec(value)?.[1];
    const number = toE164(tel ?? uriUser(value), carrier);
    if (number) return number;
  }
  return null;
}

/**
 * Reads the caller of an inbound INVITE. P-Asserted-Identity counts only from a carrier with
 * `calls.trust_asserted_identity` (RFC 3325 §5: a header from outside the trust domain is
 * ignored); its number then stands in for an anonymous From.
 */
export function callerIdentity(request: SipRequest, carrier: Pick<CarrierProfile, 'numberFormat' | 'countryCode' | 'trustAssertedIdentity'>): CallerIdentity {
  const from = request.headers.get('From') ?? '';
  const fromUser = uriUser(from);
  const fromNumber = toE164(fromUser, carrier);
  const anonymous = fromNumber === null && (fromUser === '' || /^anonymous$/i.test(fromUser) || /@anonymous\.invalid\b/i.test(from));
  const privacy = request.headers.getAll('Privacy').flatMap((v) => v.split(/[;,]/)).map((v) => v.trim().toLowerCase());
  const asserted = carrier.trustAssertedIdentity ? assertedNumber(request, carrier) : null;
  return {
    number: fromNumber ?? (anonymous ? asserted ?? 'anonymous' : fromUser),
    private: anonymous || privacy.some((v) => HIDING.has(v)),
    asserted,
    diversion: request.headers.getAll('Diversion'),
    // RFC 8224 §4: the Identity header's presence, whether or not the carrier verified it.
    verification: { verstat: verstatOf(request), identityHeader: request.headers.get('Identity') !== undefined },
  };
}

/**
 * What the INVITE to the agent edge says of the caller. The edge is not in the gateway's trust
 * domain (RFC 3325 §2.3: the tenant names a URI, no Spec(T) is agreed with the platform), so:
 * with privacy asked, From is anonymous (RFC 3323 §4.1), P-Asserted-Identity is left out (RFC
 * 3325 §5 for Privacy: id) and so is Diversion, which names the diverting parties; `Privacy: id`
 * says why. Without it, the caller's number goes in From, the asserted one, if any, as
 * P-Asserted-Identity (RFC 3325 §5 allows it toward untrusted peers when no privacy is asked), and
 * Diversion as received.
 */
export function towardAgentEdge(identity: CallerIdentity, sipHost: string): { from: string; headers: [string, string][] } {
  if (identity.private) {
    return { from: '"Anonymous" <sip:anonymous@anonymous.invalid>', headers: [['Privacy', 'id']] };
  }
  const headers: [string, string][] = identity.asserted ? [['P-Asserted-Identity', `<sip:${identity.asserted}@${sipHost}>`]] : [];
  for (const d of identity.diversion) headers.push(['Diversion', d]);
  return { from: `sip:${identity.number}@${sipHost}`, headers };
}
