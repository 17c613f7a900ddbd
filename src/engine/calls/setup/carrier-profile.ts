/**
 * @module A carrier as the call layer uses it (docs/CONFIGURATION.md "Operator surface"): where its INVITEs go, how it
 * wants numbers written, its credentials, codecs, limit and transfer method. Built from the
 * carriers file by the composition root; the built-in sandbox is one more profile.
 */
import { CODECS, type CodecDescription, type MediaEncryption } from '../../media/index.js';
import type { CallerIdPolicy } from './caller-id-policy.js';

export type NumberFormat = 'e164' | 'e164_no_plus' | 'national';
export type CodecName = 'PCMU' | 'PCMA' | 'G722' | 'telephone-event';

export interface CarrierProfile {
  name: string;
  /** A SIP URI; a host without a port is located with RFC 3263. Null: the carrier takes no outbound calls. */
  outboundUri: string | null;
  credentials?: { username: string; password: string; realm?: string };
  numberFormat: NumberFormat;
  /** Country code stripped for `national` numbers. */
  countryCode?: string;
  codecs: readonly CodecName[];
  maxConcurrentCalls: number;
  /** Where the dialled number of an inbound INVITE is read (docs/CONFIGURATION.md "Operator surface"). */
  didFrom: 'request_uri' | 'to';
  transfer: 'bridge' | 'refer';
  /** SRTP on its legs (see `MediaEncryption`). */
  mediaEncryption: MediaEncryption;
  /** Address advertised in our SDP toward this carrier, when not the gateway's own (the loopback sandbox). */
  mediaAddress?: string;
  /** Addresses and CIDRs it sends media from: its legs may learn a new source there (docs/SECURITY.md "Media sources"). */
  mediaNetworks?: readonly string[];
  /** Calls over it are sandbox calls (only sandbox keys may place them). */
  sandbox: boolean;
  /** How digits toward the remote party go (docs/API.md "Digits toward the callee"); `auto` when absent. */
  dtmf?: 'auto' | 'info';
  /** Which calling numbers a tenant may present on it (docs/API.md "Caller IDs"); `owned` when absent. */
  callerIdPolicy?: CallerIdPolicy;
  /** Its P-Asserted-Identity is believed (RFC 3325 §5: it is in the gateway's trust domain). */
  trustAssertedIdentity?: boolean;
  /** Its INVITE headers carried through to the agent (see carried-headers.ts); none when absent. */
  carryHeaders?: readonly string[];
}

/** An E.164 number (`+15550100`) written the way the carrier wants it in a SIP user part. */
export function formatNumber(e164: string, carrier: Pick<CarrierProfile, 'numberFormat' | 'countryCode'>): string {
  const digits = e164.replace(/^\+/, '');
  switch (carrier.numberFormat) {
    case 'e164': return `+${digits}`;
    case 'e164_no_plus': return digits;
    case 'national': {
      const cc = carrier.countryCode ?? '';
      return cc && digits.startsWith(cc) ? digits.slice(cc.length) : digits;
    }
  }
}

/**
 * The Request-URI for a number at the carrier: the carrier URI with the number as its user part
 * (`sip:gw.example.net:5060;transport=udp` → `sip:+15550199@gw.example.net:5060;transport=udp`).
 * A user part already in the URI (a trunk prefix such as `sip:trunk@host`) is replaced.
 */
export function requestUriFor(carrierUri: string, user: string): string {
  const colon = carrierUri.indexOf(':');
  const scheme = carrierUri.slice(0, colon);
  const rest = carrierUri.slice(colon + 1);
  const at = rest.indexOf('@');
  return `${scheme}:${user}@${at >= 0 ? rest.slice(at + 1) : rest}`;
}

/** `codecs` with `first` moved to the front (an offer that keeps a leg's codec, so bridging needs no transcoding). */
export function preferCodec(first: CodecDescription, codecs: readonly CodecDescription[]): CodecDescription[] {
  return [first, ...codecs.filter((c) => c.encoding !== first.encoding)];
}

/** The codecs to offer on the carrier leg, in the carrier's order of preference. */
export function carrierCodecs(carrier: Pick<CarrierProfile, 'codecs'>): CodecDescription[] {
  const byName: Record<CodecName, CodecDescription | undefined> = {
    PCMU: CODECS.PCMU, PCMA: CODECS.PCMA, G722: undefined, 'telephone-event': CODECS.TELEPHONE_EVENT,
  };
  // G.722 is not bridged to agents (they take 8 kHz G.711 or PCM); it is never offered.
  const codecs = carrier.codecs.map((name) => byName[name]).filter((c): c is CodecDescription => c !== undefined);
  return codecs.some((c) => c.encoding !== 'telephone-event') ? codecs : [CODECS.PCMU, CODECS.PCMA, ...codecs];
}
