/**
 * @module Tenant authentication (docs/API.md "Authentication"): BearerAuth with an API key, or CookieAuth
 * with a `gateway_session` cookie from POST /v1/auth/login; the CSRF rule for cookie requests.
 */
import type { Context } from 'koa';
import { ApiError } from '../../common/errors.js';
import type { ApiKeyRepository, SessionRepository } from '../../storage/index.js';
import type { ApiState, Principal } from '../api-state.js';
import { problems } from '../problem.js';

export const SESSION_COOKIE = 'gateway_session';

export interface AuthDeps {
  apiKeys: Pick<ApiKeyRepository, 'findActive'>;
  sessions: Pick<SessionRepository, 'authenticate'>;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Reads one cookie from the Cookie header without Koa's signed-cookie machinery. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * Who is calling. An Authorization header, when present, alone decides: an invalid one is a 401
 * even if a valid cookie is also sent, so a client never acts as someone it did not mean to be.
 */
export async function authenticate(ctx: Context & { state: ApiState }, deps: AuthDeps): Promise<Principal> {
  const authorization = ctx.get('Authorization');
  if (authorization) {
    const match = /^Bearer[ ]+([^\s]+)\s*$/i.exec(authorization);
    if (!match) throw problems.unauthorized('The Authorization header must be "Bearer <api key>".');
    const key = await deps.apiKeys.findActive(match[1]!);
    if (!key) throw problems.unauthorized('Unknown or revoked API key.');
    return { tenantId: key.tenant_id, apiKeyId: key.id, keyKind: key.kind, via: 'bearer' };
  }
  const token = readCookie(ctx.get('Cookie'), SESSION_COOKIE);
  if (token) {
    const session = await deps.sessions.authenticate(token);
    if (!session) throw problems.unauthorized('The session has expired or was revoked; log in again.');
    return { tenantId: session.tenantId, apiKeyId: session.apiKeyId, keyKind: session.keyKind, via: 'cookie', sessionToken: token };
  }
  throw problems.unauthorized();
}

/**
 * docs/API.md "Authentication": a cookie-authenticated unsafe request is refused when the browser says it is
 * cross-site, or when it names an Origin that is neither the API's own nor an allowed one.
 */
export function checkCsrf(ctx: Context, allowedOrigins: readonly string[]): void {
  if (SAFE_METHODS.has(ctx.method)) return;
  const fetchSite = ctx.get('Sec-Fetch-Site');
  const origin = ctx.get('Origin');
  const ownOrigin = `${ctx.protocol}://${ctx.host}`;
  const crossSite = fetchSite === 'cross-site';
  const foreignOrigin = origin !== '' && origin !== ownOrigin && !allowedOrigins.includes(origin);
  if (crossSite || foreignOrigin) {
    throw new ApiError(403, 'csrf_rejected', 'Cross-site requests with a session cookie are refused; use an API key.');
  }
}
