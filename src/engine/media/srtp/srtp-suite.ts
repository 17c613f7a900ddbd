/** @module The SRTP crypto suites we speak (RFC 4568 §6.2, RFC 6188 §3) and their master keys (RFC 3711 §8.1). */
import { randomBytes, timingSafeEqual } from 'node:crypto';

export type SrtpSuiteName = 'AES_CM_128_HMAC_SHA1_80' | 'AES_CM_128_HMAC_SHA1_32' | 'AES_256_CM_HMAC_SHA1_80' | 'AES_256_CM_HMAC_SHA1_32';

/**
 * One suite's lengths in octets. Every suite here is AES-CM with HMAC-SHA1 and a 112-bit salt; the
 * _32 suites shorten only the SRTP tag, SRTCP keeps 80 bits (RFC 4568 §6.2.1, RFC 6188 §3).
 */
export interface SrtpSuite {
  readonly name: SrtpSuiteName;
  readonly keyLength: 16 | 32;
  readonly saltLength: 14;
  readonly rtpTagLength: 10 | 4;
  readonly rtcpTagLength: 10;
}

const suite = (name: SrtpSuiteName, keyLength: 16 | 32, rtpTagLength: 10 | 4): SrtpSuite =>
  Object.freeze({ name, keyLength, saltLength: 14, rtpTagLength, rtcpTagLength: 10 });

/** Our order of preference for offers: AES_CM_128_HMAC_SHA1_80, AES_CM_128_HMAC_SHA1_32, AES_256_CM_HMAC_SHA1_80, AES_256_CM_HMAC_SHA1_32. */
export const SRTP_SUITES: readonly SrtpSuite[] = Object.freeze([
  suite('AES_CM_128_HMAC_SHA1_80', 16, 10),
  suite('AES_CM_128_HMAC_SHA1_32', 16, 4),
  suite('AES_256_CM_HMAC_SHA1_80', 32, 10),
  suite('AES_256_CM_HMAC_SHA1_32', 32, 4),
]);

/** The suite of that name (as written in an a=crypto line), or undefined for one we do not speak. */
export function srtpSuite(name: string): SrtpSuite | undefined {
  return SRTP_SUITES.find((s) => s.name === name);
}

/** A master key and salt for one suite (RFC 3711 §8.1). */
export interface SrtpMasterKey {
  readonly suite: SrtpSuite;
  readonly key: Buffer;
  readonly salt: Buffer;
}

/** A fresh random master key and salt (crypto.randomBytes). */
export function generateMasterKey(suite: SrtpSuite): SrtpMasterKey {
  return { suite, key: randomBytes(suite.keyLength), salt: randomBytes(suite.saltLength) };
}

/** true when two master keys are the same suite, key and salt (used to keep contexts across re-offers). */
export function sameMasterKey(a: SrtpMasterKey, b: SrtpMasterKey): boolean {
  // Constant time over the secret octets, though a re-offer's key is no secret from its sender.
  return (
    a.suite.name === b.suite.name &&
    a.key.length === b.key.length &&
    a.salt.length === b.salt.length &&
    timingSafeEqual(a.key, b.key) &&
    timingSafeEqual(a.salt, b.salt)
  );
}
