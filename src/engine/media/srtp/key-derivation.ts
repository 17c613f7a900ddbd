/** @module SRTP and SRTCP session keys from a master key (RFC 3711 §4.3, AES-CM PRF; RFC 6188 §5.1 for AES-256). */
import { AesCm } from './aes-cm.js';
import type { SrtpMasterKey } from './srtp-suite.js';

/*
 * Key derivation with key_derivation_rate 0 (RFC 3711 §4.3.1), so r = index DIV kdr is 0 and the
 * session keys are derived once per context:
 *
 *   key_id = label || r                  (8 + 48 bits)
 *   x      = key_id XOR master_salt      (112 bits, key_id right-aligned)
 *   out    = PRF_n(k_master, x) = first n bits of AES-CM(k_master, IV = x * 2^16)   (§4.3.3)
 *
 *   master_salt octets   0  1  2  3  4  5  6 | 7 | 8  9 10 11 12 13
 *                                            |   |
 *   key_id                                   |lab|  r = 0 (48 bits)
 *
 * The label lands on octet 7; with SSRC and index 0 an AesCm of that salt is exactly this PRF.
 */

/** RFC 3711 §4.3.1 labels; SRTCP's are SRTP's plus 3. */
export const SRTP_LABELS = { cipherKey: 0x00, authKey: 0x01, salt: 0x02 } as const;
export const SRTCP_LABELS = { cipherKey: 0x03, authKey: 0x04, salt: 0x05 } as const;

/** n_a: HMAC-SHA1 session authentication key, 160 bits for every suite (RFC 3711 §8.2, RFC 6188 §5.1). */
export const AUTH_KEY_LENGTH = 20;
/** n_s: session salt, 112 bits. */
export const SALT_LENGTH = 14;

/** PRF_n(k_master, label) with r = 0: `length` octets of AES-CM keystream (RFC 3711 §4.3.3). */
export function aesCmPrf(masterKey: Buffer, masterSalt: Buffer, label: number, length: number): Buffer {
  if (masterSalt.length !== SALT_LENGTH) throw new RangeError('master salt must be 14 octets');
  if (masterKey.length !== 16 && masterKey.length !== 32) throw new RangeError('master key must be 16 or 32 octets');
  const x = Buffer.from(masterSalt);
  x[7] = x[7]! ^ label;
  const out = Buffer.alloc(length);
  new AesCm(masterKey, x).xor(0, 0, out, out, 0, length);
  return out;
}

/** The session keys of one direction of one protocol. */
export interface SrtpSessionKeys {
  /** k_e: as long as the master key (128 or 256 bits). */
  readonly cipherKey: Buffer;
  /** k_a: 160 bits. */
  readonly authKey: Buffer;
  /** k_s: 112 bits. */
  readonly salt: Buffer;
}

/** Derives the SRTP (labels 0x00-0x02) or SRTCP (0x03-0x05) session keys of `master`. */
export function deriveSessionKeys(master: SrtpMasterKey, protocol: 'srtp' | 'srtcp'): SrtpSessionKeys {
  const labels = protocol === 'srtp' ? SRTP_LABELS : SRTCP_LABELS;
  if (master.key.length !== master.suite.keyLength) throw new RangeError(`${master.suite.name} needs a ${master.suite.keyLength}-octet master key`);
  return {
    cipherKey: aesCmPrf(master.key, master.salt, labels.cipherKey, master.suite.keyLength),
    authKey: aesCmPrf(master.key, master.salt, labels.authKey, AUTH_KEY_LENGTH),
    salt: aesCmPrf(master.key, master.salt, labels.salt, SALT_LENGTH),
  };
}
