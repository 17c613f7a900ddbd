/**
 * @module The credentials of the authentication matrix (docs/API.md "Authentication") and what each must
 * get: absent, malformed, unknown and revoked credentials a 401, session cookies checked for CSRF
 * on unsafe methods, an Authorization header deciding alone when it is present.
 */
import type { ApiWorld } from './api-world.js';

/** What a credential must get on an operation: the status the owner's live key gets, or a fixed one. */
export type Expected = { status: number; code: string } | 'as-owner' | 'own-scope';

export interface Credential {
  label: string;
  headers(world: ApiWorld): Record<string, string>;
  /** For an operation that takes credentials; `unsafe` is true for POST, PUT and DELETE. */
  onSecured(unsafe: boolean, referencesOwnedResource: boolean, path: string): Expected;
  /** For one that takes none: credentials are ignored, except for login's own CSRF rule. */
  onOpen(operationId: string): Expected;
}

const UNAUTHORIZED: Expected = { status: 401, code: 'unauthorized' };
const CSRF: Expected = { status: 403, code: 'csrf_rejected' };
const NOT_FOUND: Expected = { status: 404, code: 'not_found' };

const refused = (label: string, headers: Credential['headers']): Credential => ({
  label, headers, onSecured: () => UNAUTHORIZED, onOpen: () => 'as-owner',
});
const allowed = (label: string, headers: Credential['headers']): Credential => ({
  label, headers, onSecured: () => 'as-owner', onOpen: () => 'as-owner',
});
/**
 * docs/SANDBOX.md, Keys and calls: the owner's calls are on a live carrier, so the owner's sandbox
 * key reads each of them as missing. Unsafe probes carry a body every operation refuses, so they
 * get the owner's 400 before any call is looked up.
 */
const sandboxKey = (label: string, headers: Credential['headers']): Credential => ({
  label, headers, onSecured: (unsafe, owned, path) => (!unsafe && owned && path.startsWith('/v1/calls/') ? NOT_FOUND : 'as-owner'), onOpen: () => 'as-owner',
});
const crossSite = (label: string, headers: Credential['headers']): Credential => ({
  label, headers, onSecured: (unsafe) => (unsafe ? CSRF : 'as-owner'),
  // Login applies the cookie requests' CSRF rule to itself (login CSRF).
  onOpen: (operationId) => (operationId === 'login' ? CSRF : 'as-owner'),
});
const intruder = (label: string, headers: Credential['headers']): Credential => ({
  label, headers, onSecured: (_unsafe, owned) => (owned ? NOT_FOUND : 'own-scope'), onOpen: () => 'as-owner',
});

/** Every column of the matrix, in print order. */
export const CREDENTIALS: Credential[] = [
  refused('none', () => ({})),
  refused('wrong scheme', (w) => ({ authorization: `Basic ${Buffer.from(`x:${w.owner.apiKey}`).toString('base64')}` })),
  refused('empty bearer', () => ({ authorization: 'Bearer ' })),
  refused('garbage', () => ({ authorization: 'Bearer !!"<>\\ %00 ä' })),
  refused('over-long', () => ({ authorization: `Bearer vgw_live_${'A'.repeat(8000)}` })),
  refused('unknown key', () => ({ authorization: 'Bearer vgw_live_0000000000000000000000000000000000000000' })),
  refused('revoked key', (w) => ({ authorization: `Bearer ${w.revokedKey}` })),
  refused('revoked cookie', (w) => ({ cookie: w.revokedCookie })),
  allowed('live key', (w) => w.owner.auth),
  sandboxKey('sandbox key', (w) => ({ authorization: `Bearer ${w.owner.sandboxKey}` })),
  intruder('other tenant', (w) => w.intruder.auth),
  allowed('cookie', (w) => ({ cookie: w.owner.liveCookie })),
  sandboxKey('sandbox cookie', (w) => ({ cookie: w.owner.sandboxCookie })),
  allowed('cookie same-origin', (w) => ({ cookie: w.owner.liveCookie, 'sec-fetch-site': 'same-origin' })),
  allowed('cookie own Origin', (w) => ({ cookie: w.owner.liveCookie, origin: w.ownOrigin })),
  allowed('cookie allowed Origin', (w) => ({ cookie: w.owner.liveCookie, origin: 'https://console.example.com' })),
  crossSite('cookie cross-site', (w) => ({ cookie: w.owner.liveCookie, 'sec-fetch-site': 'cross-site' })),
  crossSite('cookie foreign Origin', (w) => ({ cookie: w.owner.liveCookie, origin: 'https://evil.example' })),
  refused('bad bearer + cookie', (w) => ({ authorization: 'Bearer vgw_live_wrong', cookie: w.owner.liveCookie })),
  intruder('other bearer + cookie', (w) => ({ ...w.intruder.auth, cookie: w.owner.liveCookie })),
];
