/**
 * @module Authenticated encryption of secrets at rest (provider keys, SIP passwords) with
 * AES-256-GCM under the gateway's master key.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const IV_BYTES = 12; // NIST SP 800-38D: 96-bit IVs for GCM
const TAG_BYTES = 16;

/** Thrown when a sealed value was altered, truncated or sealed under another key. */
export class SecretDecryptionError extends Error {
  override readonly name = 'SecretDecryptionError';
}

/**
 * Seals and opens secrets. The sealed form is `v1.<iv>.<tag>.<ciphertext>` in base64url, so it is
 * plain text in SQLite and carries its own format version for a later key rotation.
 */
export class SecretBox {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new RangeError('the master key must be 32 bytes');
    this.#key = Buffer.from(key);
  }

  /**
   * Encrypts `plaintext`. `context` (for example the row's id and column) is bound as associated
   * data, so a sealed value copied into another row does not open.
   */
  seal(plaintext: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
  }

  open(sealed: string, context: string): string {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== VERSION || iv === undefined || tag === undefined || body === undefined) {
      throw new SecretDecryptionError('not a sealed secret of a known version');
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(iv, 'base64url'), { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    } catch (err) {
      throw new SecretDecryptionError('the sealed secret failed authentication', { cause: err });
    }
  }
}
