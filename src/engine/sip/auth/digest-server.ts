/**
 * @module UAS digest challenge and verification (RFC 3261 §22.1, RFC 7616, RFC 2617, RFC 8760) for
 * sources configured with inbound authentication. A nonce carries its issue time and an HMAC over
 * it and the source address it was issued to, so a forged nonce or one issued to another source is
 * refused without a lookup; the {@link NonceStore} makes each nonce count single-use (docs/SECURITY.md,
 * "SIP digest").
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../../../common/clock.js';
import { uriEquals } from '../grammar/uri-compare.js';
import { parseUri } from '../grammar/uri.js';
import { parseAuthParams, formatAuthParams, UNQUOTED_PARAMS } from './auth-header.js';
import { digestResponse, type DigestAlgorithm } from './digest.js';
import { NonceStore } from './nonce-store.js';

/** Options of a {@link DigestServer}. */
export interface DigestServerOptions {
  realm: string;
  /** HMAC key for nonces; random per process when absent. */
  secret?: Buffer;
  /** Nonce lifetime in ms; default 5 minutes. */
  nonceTtlMs?: number;
  /** Issued nonces remembered at most (least recently used forgotten first); default 10,000. */
  maxNonces?: number;
  clock: Clock;
  /** Algorithms to offer, strongest first (RFC 8760 §2.4 allows one challenge per algorithm). */
  algorithms?: readonly DigestAlgorithm[];
}

/** The request whose credentials are checked. */
export interface DigestRequest {
  method: string;
  /** The Request-URI as received. */
  requestUri: string;
  /** The address the request came from: a nonce is accepted only from the address it was issued to. */
  source: string;
}

/**
 * Why credentials were refused. `stale`: right credentials on a nonce that expired or was
 * forgotten; `replayed`: right credentials on a nonce count already used; `uri-mismatch`: the
 * digest `uri` is not the Request-URI (answered 400, RFC 7616 §3.4.6); `bad-nonce`: a nonce not
 * issued here, or issued to another source.
 */
export type DigestRefusal = 'missing' | 'malformed' | 'unknown-user' | 'bad-response' | 'bad-nonce' | 'stale' | 'replayed' | 'uri-mismatch';

/** The outcome of checking a request's credentials: a value, never an exception. */
export type DigestVerdict = { ok: true; username: string } | { ok: false; reason: DigestRefusal };

/**
 * RFC 7616 §3.3 / RFC 2617 §3.2.1: a new challenge carries `stale=true` when the credentials were
 * right and only the nonce was no longer good, so the client retries without asking its user.
 */
export function isStaleRefusal(verdict: DigestVerdict): boolean {
  return !verdict.ok && (verdict.reason === 'stale' || verdict.reason === 'replayed');
}

const DEFAULT_TTL_MS = 300_000;
const DEFAULT_MAX_NONCES = 10_000;
/** RFC 7616 §3.4: nc is exactly 8 hex digits. */
const NONCE_COUNT = /^[0-9a-f]{8}$/i;

/** Issues challenges and verifies credentials for one realm. */
export class DigestServer {
  readonly realm: string;
  readonly #secret: Buffer;
  readonly #ttl: number;
  readonly #clock: Clock;
  readonly #algorithms: readonly DigestAlgorithm[];
  readonly #nonces: NonceStore;

  constructor(options: DigestServerOptions) {
    this.realm = options.realm;
    this.#secret = options.secret ?? randomBytes(32);
    this.#ttl = options.nonceTtlMs ?? DEFAULT_TTL_MS;
    this.#clock = options.clock;
    this.#algorithms = options.algorithms ?? ['SHA-256', 'MD5'];
    this.#nonces = new NonceStore({ maxEntries: options.maxNonces ?? DEFAULT_MAX_NONCES, ttlMs: this.#ttl, clock: this.#clock });
  }

  /** Nonces remembered now (bounded by `maxNonces`). */
  get nonceCount(): number {
    return this.#nonces.size;
  }

  /**
   * A nonce for `source`: `<ms timestamp hex>.<random>.<HMAC-SHA256(secret, timestamp.random|source)>`,
   * remembered until used up, expired or evicted.
   */
  createNonce(source: string): string {
    const body = `${this.#clock.now().toString(16)}.${randomBytes(12).toString('base64url')}`;
    const nonce = `${body}.${this.#mac(body, source)}`;
    this.#nonces.add(nonce);
    return nonce;
  }

  /** Values for WWW-Authenticate (401) or Proxy-Authenticate (407) to `source`, one per algorithm. */
  challenge(source: string, stale = false): string[] {
    const nonce = this.createNonce(source);
    return this.#algorithms.map((algorithm) => {
      const params: [string, string][] = [['realm', this.realm], ['nonce', nonce], ['algorithm', algorithm], ['qop', '"auth"']];
      if (stale) params.push(['stale', 'true']);
      return formatAuthParams('Digest', params, UNQUOTED_PARAMS);
    });
  }

  /**
   * Checks an Authorization header value for `request`. `passwordOf` looks the user up; undefined
   * means unknown. Only credentials whose response is right can be `stale` or `replayed`, so those
   * verdicts tell an attacker nothing about the password.
   */
  verify(header: string | undefined, request: DigestRequest, passwordOf: (username: string) => string | undefined): DigestVerdict {
    if (header === undefined) return { ok: false, reason: 'missing' };
    const p = parseAuthParams(header);
    if (!p || p.scheme.toLowerCase() !== 'digest') return { ok: false, reason: 'malformed' };
    const get = (k: string): string | undefined => p.params.get(k);
    const username = get('username'), nonce = get('nonce'), uri = get('uri'), response = get('response'), realm = get('realm');
    const algorithm = (get('algorithm') ?? 'MD5').toUpperCase();
    if (!username || !nonce || !uri || !response || realm !== this.realm) return { ok: false, reason: 'malformed' };
    const alg = this.#algorithms.find((a) => a === algorithm);
    if (!alg) return { ok: false, reason: 'malformed' };
    const qop = get('qop');
    const nc = get('nc'), cnonce = get('cnonce');
    if (qop !== undefined && (qop !== 'auth' || !nc || !NONCE_COUNT.test(nc) || !cnonce)) return { ok: false, reason: 'malformed' };
    // RFC 7616 §3.4.6 / RFC 2617 §3.2.2.5: credentials for another Request-URI are a bad request.
    if (!sameRequestUri(uri, request.requestUri)) return { ok: false, reason: 'uri-mismatch' };
    const issuedAt = this.#nonceIssuedAt(nonce, request.source);
    if (issuedAt === undefined) return { ok: false, reason: 'bad-nonce' };
    const password = passwordOf(username);
    if (password === undefined) return { ok: false, reason: 'unknown-user' };
    const expected = digestResponse({ algorithm: alg, username, password, realm, method: request.method, uri, nonce, ...(qop ? { qop: 'auth' as const, nc, cnonce } : {}) });
    if (!safeEqual(expected, response.toLowerCase())) return { ok: false, reason: 'bad-response' };
    if (this.#clock.now() - issuedAt > this.#ttl) return { ok: false, reason: 'stale' };
    // Without qop there is no count (RFC 2069 compatibility): the nonce is good for one request.
    const use = this.#nonces.use(nonce, nc ? parseInt(nc, 16) : 1);
    if (use === 'unknown') return { ok: false, reason: 'stale' };
    if (use === 'replayed') return { ok: false, reason: 'replayed' };
    return { ok: true, username };
  }

  #mac(body: string, source: string): string {
    return createHmac('sha256', this.#secret).update(`${body}|${source.toLowerCase()}`).digest('base64url');
  }

  /** The nonce's issue time when it is ours and was issued to `source`, else undefined. */
  #nonceIssuedAt(nonce: string, source: string): number | undefined {
    const dot = nonce.lastIndexOf('.');
    const body = nonce.slice(0, dot), mac = nonce.slice(dot + 1);
    const ts = body.split('.')[0] ?? '';
    if (dot < 0 || !/^[0-9a-f]{1,13}$/.test(ts) || !safeEqual(this.#mac(body, source), mac)) return undefined;
    return parseInt(ts, 16);
  }
}

/**
 * The digest `uri` names the Request-URI (RFC 3261 §22.4): equal as text, or as SIP URIs under
 * RFC 3261 §19.1.4 (a client may write the same URI with other case or escaping).
 */
function sameRequestUri(digestUri: string, requestUri: string): boolean {
  if (digestUri === requestUri) return true;
  try {
    return uriEquals(parseUri(digestUri), parseUri(requestUri));
  } catch {
    return false;
  }
}

function safeEqual(a: string, b: string): boolean {
  const ba = Buffer.from(a), bb = Buffer.from(b);
  return ba.length === bb.length && timingSafeEqual(ba, bb);
}
