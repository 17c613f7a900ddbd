/**
 * @module UAS digest challenge and verification (RFC 3261 §22.1, RFC 2617, RFC 8760) for carriers
 * configured with inbound authentication. Nonces are stateless: a timestamp and its HMAC, so any
 * node holding the secret can verify them and expired ones get `stale=true`.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../../../common/clock.js';
import { parseAuthParams, formatAuthParams, UNQUOTED_PARAMS } from './auth-header.js';
import { digestResponse, type DigestAlgorithm } from './digest.js';

/** Options of a {@link DigestServer}. */
export interface DigestServerOptions {
  realm: string;
  /** HMAC key for nonces; random per process when absent. */
  secret?: Buffer;
  /** Nonce lifetime in ms; default 5 minutes. */
  nonceTtlMs?: number;
  clock: Clock;
  /** Algorithms to offer, strongest first (RFC 8760 §2.4 allows one challenge per algorithm). */
  algorithms?: readonly DigestAlgorithm[];
}

/** The outcome of checking a request's credentials: a value, never an exception. */
export type DigestVerdict =
  | { ok: true; username: string }
  | { ok: false; reason: 'missing' | 'malformed' | 'unknown-user' | 'bad-response' | 'bad-nonce' | 'stale' };

/** Issues challenges and verifies credentials for one realm. */
export class DigestServer {
  readonly realm: string;
  readonly #secret: Buffer;
  readonly #ttl: number;
  readonly #clock: Clock;
  readonly #algorithms: readonly DigestAlgorithm[];

  constructor(options: DigestServerOptions) {
    this.realm = options.realm;
    this.#secret = options.secret ?? randomBytes(32);
    this.#ttl = options.nonceTtlMs ?? 300_000;
    this.#clock = options.clock;
    this.#algorithms = options.algorithms ?? ['SHA-256', 'MD5'];
  }

  /** A nonce: `<ms timestamp hex>.<HMAC-SHA256(secret, timestamp) base64url>`. */
  createNonce(): string {
    const ts = this.#clock.now().toString(16);
    return `${ts}.${this.#mac(ts)}`;
  }

  /** Values for WWW-Authenticate (401) or Proxy-Authenticate (407), one per algorithm. */
  challenge(stale = false): string[] {
    const nonce = this.createNonce();
    return this.#algorithms.map((algorithm) => {
      const params: [string, string][] = [['realm', this.realm], ['nonce', nonce], ['algorithm', algorithm], ['qop', '"auth"']];
      if (stale) params.push(['stale', 'true']);
      return formatAuthParams('Digest', params, UNQUOTED_PARAMS);
    });
  }

  /**
   * Checks an Authorization header value for `method`. `passwordOf` looks the user up; undefined
   * means unknown. RFC 2617 §3.2.1: an expired but authentic nonce yields `stale`.
   */
  verify(header: string | undefined, method: string, passwordOf: (username: string) => string | undefined): DigestVerdict {
    if (header === undefined) return { ok: false, reason: 'missing' };
    const p = parseAuthParams(header);
    if (!p || p.scheme.toLowerCase() !== 'digest') return { ok: false, reason: 'malformed' };
    const get = (k: string): string | undefined => p.params.get(k);
    const username = get('username'), nonce = get('nonce'), uri = get('uri'), response = get('response'), realm = get('realm');
    const algorithm = (get('algorithm') ?? 'MD5').toUpperCase();
    if (!username || !nonce || !uri || !response || realm !== this.realm) return { ok: false, reason: 'malformed' };
    const alg = this.#algorithms.find((a) => a === algorithm);
    if (!alg) return { ok: false, reason: 'malformed' };
    const age = this.#nonceAge(nonce);
    if (age === undefined) return { ok: false, reason: 'bad-nonce' };
    const password = passwordOf(username);
    if (password === undefined) return { ok: false, reason: 'unknown-user' };
    const qop = get('qop');
    const nc = get('nc'), cnonce = get('cnonce');
    if (qop !== undefined && (qop !== 'auth' || !nc || !cnonce)) return { ok: false, reason: 'malformed' };
    const expected = digestResponse({ algorithm: alg, username, password, realm, method, uri, nonce, ...(qop ? { qop: 'auth' as const, nc, cnonce } : {}) });
    if (!safeEqual(expected, response.toLowerCase())) return { ok: false, reason: 'bad-response' };
    if (age > this.#ttl) return { ok: false, reason: 'stale' };
    return { ok: true, username };
  }

  #mac(ts: string): string {
    return createHmac('sha256', this.#secret).update(ts).digest('base64url');
  }

  /** The nonce's age in ms when it is ours, else undefined. */
  #nonceAge(nonce: string): number | undefined {
    const [ts, mac] = nonce.split('.');
    if (!ts || !mac || !/^[0-9a-f]{1,13}$/.test(ts) || !safeEqual(this.#mac(ts), mac)) return undefined;
    return this.#clock.now() - parseInt(ts, 16);
  }
}

function safeEqual(a: string, b: string): boolean {
  const ba = Buffer.from(a), bb = Buffer.from(b);
  return ba.length === bb.length && timingSafeEqual(ba, bb);
}
