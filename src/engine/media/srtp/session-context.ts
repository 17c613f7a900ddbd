/** @module The per-direction crypto of SRTP or SRTCP: its AES-CM cipher and HMAC-SHA1 authentication (RFC 3711 §4.1.1, §4.2.1). */
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import { AesCm } from './aes-cm.js';
import { deriveSessionKeys } from './key-derivation.js';
import type { SrtpMasterKey } from './srtp-suite.js';

/*
 * HMAC-SHA1 per packet: a createHmac(k_a) for each one. The alternative, the inner and outer
 * hashes of RFC 2104 keyed once (SHA1 over k_a XOR ipad, and over k_a XOR opad) and cloned per
 * packet with hash.copy(), saves the two compressions of the padded key but creates two Hash
 * objects and makes six native calls instead of three. Measured (bench/media/bench-srtp.ts, 176
 * octets) it was never faster: level at best, up to a quarter slower. Per-packet cost here is
 * mostly the calls into native code, not SHA-1. A KeyObject spares createHmac importing the key
 * each time (about 0.3 µs).
 */

/** The session keys of one protocol and direction, ready for packets. */
export class SessionContext {
  readonly cipher: AesCm;
  readonly #authKey: KeyObject;

  constructor(master: SrtpMasterKey, protocol: 'srtp' | 'srtcp') {
    const keys = deriveSessionKeys(master, protocol);
    this.cipher = new AesCm(keys.cipherKey, keys.salt);
    this.#authKey = createSecretKey(keys.authKey);
  }

  /** The full 160-bit HMAC-SHA1 of `data`, or of data || trailer; callers truncate (RFC 3711 §4.2.1). */
  mac(data: Buffer, trailer?: Buffer): Buffer {
    const hmac = createHmac('sha1', this.#authKey).update(data);
    if (trailer !== undefined) hmac.update(trailer);
    return hmac.digest();
  }
}
