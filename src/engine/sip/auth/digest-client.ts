/**
 * @module UAC digest authentication (RFC 3261 §22.2-22.3, RFC 2617, RFC 8760): answers 401 and
 * 407 challenges and keeps the nonce count so later requests reuse the credentials.
 */
import { randomBytes } from 'node:crypto';
import { parseAuthParams, formatAuthParams, UNQUOTED_PARAMS, type AuthParams } from './auth-header.js';
import { digestResponse, formatNonceCount, type DigestAlgorithm } from './digest.js';

/** The account used to answer challenges. */
export interface DigestCredentials {
  username: string;
  password: string;
  /** When set, challenges for other realms are refused. */
  realm?: string;
}

/** One accepted challenge, kept to authorize later requests with an increasing nonce count. */
interface Challenge {
  header: 'Authorization' | 'Proxy-Authorization';
  algorithm: DigestAlgorithm;
  realm: string;
  nonce: string;
  opaque: string | undefined;
  qop: 'auth' | undefined;
  nc: number;
}

/** RFC 8760 §2.4: prefer the strongest algorithm offered; MD5 last. */
const PREFERENCE: readonly DigestAlgorithm[] = ['SHA-256', 'MD5'];

/** Answers digest challenges for one account; one instance per dialog or registration. */
export class DigestClient {
  readonly #credentials: DigestCredentials;
  readonly #cnonce: () => string;
  #challenge: Challenge | undefined;
  /** Whether credentials for the current nonce were already sent (a second plain challenge means rejection). */
  #used = false;

  constructor(credentials: DigestCredentials, cnonce: () => string = () => randomBytes(8).toString('hex')) {
    this.#credentials = credentials;
    this.#cnonce = cnonce;
  }

  /**
   * Takes the challenge headers of a 401 (WWW-Authenticate) or 407 (Proxy-Authenticate).
   * Returns false when the request should not be retried: no usable challenge, another realm,
   * or the same credentials were already refused (RFC 3261 §22.2: no endless retry loop).
   */
  handleChallenge(status: 401 | 407, headerValues: readonly string[]): boolean {
    const parsed = headerValues.map(parseAuthParams).filter((p): p is AuthParams => p !== undefined && p.scheme.toLowerCase() === 'digest');
    const candidates = parsed.flatMap((p) => {
      const algorithm = (p.params.get('algorithm') ?? 'MD5').toUpperCase();
      const alg = PREFERENCE.find((a) => a === algorithm);
      const realm = p.params.get('realm');
      const nonce = p.params.get('nonce');
      if (!alg || realm === undefined || nonce === undefined) return [];
      if (this.#credentials.realm !== undefined && this.#credentials.realm !== realm) return [];
      const qops = (p.params.get('qop') ?? '').split(',').map((q) => q.trim());
      // qop=auth-int alone cannot be answered (bodies are opaque to us); RFC 2069 mode when absent.
      if (p.params.has('qop') && !qops.includes('auth')) return [];
      return [{ alg, realm, nonce, opaque: p.params.get('opaque'), qop: p.params.has('qop') ? 'auth' as const : undefined, stale: p.params.get('stale')?.toLowerCase() === 'true' }];
    });
    candidates.sort((a, b) => PREFERENCE.indexOf(a.alg) - PREFERENCE.indexOf(b.alg));
    const best = candidates[0];
    if (!best) return false;
    const prev = this.#challenge;
    if (prev && this.#used && prev.realm === best.realm && !best.stale) return false;
    this.#challenge = {
      header: status === 401 ? 'Authorization' : 'Proxy-Authorization',
      algorithm: best.alg, realm: best.realm, nonce: best.nonce, opaque: best.opaque, qop: best.qop, nc: 0,
    };
    this.#used = false;
    return true;
  }

  /** True once a challenge has been accepted, so requests can carry credentials preemptively. */
  get hasChallenge(): boolean {
    return this.#challenge !== undefined;
  }

  /** The credentials header for a request, or undefined before any challenge. */
  authorize(method: string, uri: string): { name: 'Authorization' | 'Proxy-Authorization'; value: string } | undefined {
    const c = this.#challenge;
    if (!c) return undefined;
    this.#used = true;
    c.nc += 1;
    const nc = formatNonceCount(c.nc);
    const cnonce = this.#cnonce();
    const { username, password } = this.#credentials;
    const response = digestResponse({ algorithm: c.algorithm, username, password, realm: c.realm, method, uri, nonce: c.nonce, ...(c.qop ? { qop: c.qop, nc, cnonce } : {}) });
    const params: [string, string][] = [['username', username], ['realm', c.realm], ['nonce', c.nonce], ['uri', uri], ['response', response], ['algorithm', c.algorithm]];
    if (c.opaque !== undefined) params.push(['opaque', c.opaque]);
    if (c.qop) params.push(['qop', c.qop], ['nc', nc], ['cnonce', cnonce]);
    return { name: c.header, value: formatAuthParams('Digest', params, UNQUOTED_PARAMS) };
  }
}
