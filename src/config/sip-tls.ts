/** @module The certificate material of SIP over TLS (config `sip.tls`), read and checked at start. */
import { readFileSync } from 'node:fs';
import { createSecureContext, rootCertificates } from 'node:tls';
import { ConfigError } from './load-config.js';

/** What the TLS transport needs, as PEM. */
export interface SipTlsMaterial {
  cert: Buffer;
  key: Buffer;
  /** Roots for outbound connections: the system's, plus the configured CA when there is one. */
  ca?: (string | Buffer)[];
}

function read(key: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new ConfigError(`config: sip.tls.${key} ${file} cannot be read: ${(err as Error).message}`);
  }
}

/**
 * Reads `sip.tls`'s files. A file that cannot be read, or a certificate that does not belong to its
 * key, stops the start naming the key, rather than failing the first TLS handshake of a call.
 */
export function readSipTls(tls: { cert_file: string; key_file: string; ca_file?: string | undefined }): SipTlsMaterial {
  const cert = read('cert_file', tls.cert_file);
  const key = read('key_file', tls.key_file);
  try {
    createSecureContext({ cert, key });
  } catch (err) {
    throw new ConfigError(`config: sip.tls.cert_file and key_file do not make a usable pair: ${(err as Error).message}`);
  }
  // Node trusts its bundled roots only while `ca` is unset; a private CA is added to them, not put in their place.
  return tls.ca_file === undefined ? { cert, key } : { cert, key, ca: [...rootCertificates, read('ca_file', tls.ca_file)] };
}
