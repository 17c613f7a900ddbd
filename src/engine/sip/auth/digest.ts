/** @module HTTP Digest computations for SIP (RFC 2617 §3.2.2, RFC 8760 §2: MD5 and SHA-256, qop=auth). */
import { createHash } from 'node:crypto';

/** RFC 8760 §2.4: the algorithms a SIP UA may use; `-sess` variants are not supported. */
export type DigestAlgorithm = 'MD5' | 'SHA-256';

/** The inputs of one digest response computation. */
export interface DigestInput {
  algorithm: DigestAlgorithm;
  username: string;
  realm: string;
  password: string;
  method: string;
  /** The digest-uri: the Request-URI as sent (RFC 3261 §22.4). */
  uri: string;
  nonce: string;
  /** Absent for RFC 2069 compatibility (no qop offered by the server). */
  qop?: 'auth';
  /** Eight hex digits, present with qop. */
  nc?: string;
  cnonce?: string;
}

/** Lowercase hex hash with the named algorithm. */
export function digestHash(algorithm: DigestAlgorithm, data: string): string {
  return createHash(algorithm === 'MD5' ? 'md5' : 'sha256').update(data, 'utf8').digest('hex');
}

/** RFC 2617 §3.2.2.2: A1 = username ":" realm ":" password. */
export function ha1(i: Pick<DigestInput, 'algorithm' | 'username' | 'realm' | 'password'>): string {
  return digestHash(i.algorithm, `${i.username}:${i.realm}:${i.password}`);
}

/** RFC 2617 §3.2.2.1: request-digest, with or without qop. */
export function digestResponse(i: DigestInput): string {
  const h1 = ha1(i);
  // §3.2.2.3: A2 = Method ":" digest-uri-value (qop=auth or absent).
  const h2 = digestHash(i.algorithm, `${i.method}:${i.uri}`);
  if (i.qop === 'auth') {
    if (i.nc === undefined || i.cnonce === undefined) throw new TypeError('qop=auth needs nc and cnonce');
    return digestHash(i.algorithm, `${h1}:${i.nonce}:${i.nc}:${i.cnonce}:${i.qop}:${h2}`);
  }
  return digestHash(i.algorithm, `${h1}:${i.nonce}:${h2}`);
}

/** Nonce count as eight lowercase hex digits (RFC 2617 §3.2.2). */
export function formatNonceCount(n: number): string {
  return n.toString(16).padStart(8, '0');
}
