/**
 * @module SDP Security Descriptions (RFC 4568): the a=crypto attributes that carry SRTP master
 * keys in an offer and its answer, and the choice of one of them.
 */
import type { MediaDescription as SdpMedia } from 'sdp-transform';
import { generateMasterKey, SRTP_SUITES, srtpSuite, type SrtpMasterKey, type SrtpSuiteName } from '../srtp/srtp-suite.js';

/**
 * Media encryption on a leg: `disabled` is plain RTP (RTP/AVP) only; `allowed` answers an SRTP
 * offer with SRTP and a plain one with plain RTP, and offers plain RTP; `required` offers and
 * accepts RTP/SAVP only.
 */
export type MediaEncryption = 'disabled' | 'allowed' | 'required';

/** One usable a=crypto line of a remote description. */
export interface CryptoOffer {
  /** The line's tag: the answer names the line it accepts by it (RFC 4568 §5.1.2). */
  tag: number;
  master: SrtpMasterKey;
}

/** The keys of an SRTP stream once negotiated: ours protect what we send, theirs what we receive (RFC 4568 §6.1). */
export interface NegotiatedSrtp {
  suite: SrtpSuiteName;
  tag: number;
  send: SrtpMasterKey;
  receive: SrtpMasterKey;
}

/**
 * A leg's own master keys, one per suite, made when first asked for and kept for the life of the
 * leg: re-offers and re-answers then carry the same key, so the SRTP contexts and their rollover
 * counters go on (RFC 4568 §7.1.4 lets a re-offer keep the key).
 */
export class SrtpKeyring {
  readonly #keys = new Map<SrtpSuiteName, SrtpMasterKey>();

  keyFor(suite: SrtpSuiteName): SrtpMasterKey {
    let master = this.#keys.get(suite);
    if (master === undefined) {
      master = generateMasterKey(srtpSuite(suite)!);
      this.#keys.set(suite, master);
    }
    return master;
  }
}

/** What our SDP says about encryption on one leg. */
export interface LocalSrtp {
  encryption: MediaEncryption;
  keyring: SrtpKeyring;
}

/**
 * RFC 4568 §9.1, with what we accept of it:
 *
 *   a=crypto:<tag> <crypto-suite> inline:<base64 key||salt>[|<lifetime>][|<MKI>:<length>] [<session-params>]
 *
 * A line is usable when its suite is one we implement, it has exactly one inline key of the
 * suite's length, no MKI (we never send one, and it would change the packet layout) and no session
 * parameters (KDR, UNENCRYPTED_SRTP and the like change the transform; §6.3 lets an answerer pass
 * over such a line). The lifetime is read for validity only: a call never reaches 2^20 packets
 * per key in less than 5.8 hours, and we do not re-key.
 */
export function usableCryptoOffers(media: SdpMedia): CryptoOffer[] {
  const out: CryptoOffer[] = [];
  for (const line of media.crypto ?? []) {
    const suite = srtpSuite(line.suite);
    if (suite === undefined || line.sessionConfig !== undefined || !Number.isInteger(line.id) || line.id < 0) continue;
    const keyParams = line.config.split(';');
    if (keyParams.length !== 1) continue;
    const match = /^inline:([A-Za-z0-9+/]+={0,2})(?:\|((?:2\^)?\d+))?(?:\|(\d+):(\d+))?$/.exec(keyParams[0]!);
    if (match === null) continue;
    const [, base64, , mki] = match;
    if (mki !== undefined) continue;
    const keySalt = Buffer.from(base64!, 'base64');
    if (keySalt.length !== suite.keyLength + suite.saltLength) continue;
    out.push({ tag: line.id, master: { suite, key: keySalt.subarray(0, suite.keyLength), salt: keySalt.subarray(suite.keyLength) } });
  }
  return out;
}

/** An a=crypto line for sdp-transform with `master` inline and the default lifetime, no MKI. */
export function cryptoLine(tag: number, master: SrtpMasterKey): { id: number; suite: string; config: string } {
  return { id: tag, suite: master.suite.name, config: `inline:${Buffer.concat([master.key, master.salt]).toString('base64')}` };
}

/** The crypto lines of an offer: every suite we implement, in our order of preference, tags from 1. */
export function offerCryptoLines(keyring: SrtpKeyring): { id: number; suite: string; config: string }[] {
  return SRTP_SUITES.map((suite, i) => cryptoLine(i + 1, keyring.keyFor(suite.name)));
}

/**
 * RFC 4568 §7.1.2 (answerer): the first usable line of the offer, in the offerer's order, answered
 * with the same tag and suite and our key for that suite.
 */
export function answerCrypto(offered: readonly CryptoOffer[], keyring: SrtpKeyring): NegotiatedSrtp | null {
  const chosen = offered[0];
  if (chosen === undefined) return null;
  const suite = chosen.master.suite.name;
  return { suite, tag: chosen.tag, send: keyring.keyFor(suite), receive: chosen.master };
}

/**
 * RFC 4568 §7.1.3 (offerer): the answer must accept exactly one of our lines, by its tag and with
 * that line's suite; it brings the answerer's key.
 */
export function acceptedCrypto(answered: readonly CryptoOffer[], keyring: SrtpKeyring): NegotiatedSrtp | null {
  if (answered.length !== 1) return null;
  const accepted = answered[0]!;
  const ours = SRTP_SUITES.findIndex((suite) => suite.name === accepted.master.suite.name);
  if (ours < 0 || ours + 1 !== accepted.tag) return null;
  const suite = accepted.master.suite.name;
  return { suite, tag: accepted.tag, send: keyring.keyFor(suite), receive: accepted.master };
}
