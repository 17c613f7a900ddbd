/** @module POST /v1/auth/login and /v1/auth/logout: cookie sessions (docs/API.md "Authentication"). */
import { Type } from '@sinclair/typebox';
import type { ApiKeyRepository, SessionRepository } from '../../../storage/index.js';
import { checkCsrf, SESSION_COOKIE } from '../../middleware/tenant-auth.js';
import { problems } from '../../problem.js';
import { defineRoute, type AnyRoute } from '../../route.js';

export interface AuthRouteDeps {
  apiKeys: Pick<ApiKeyRepository, 'findActive'>;
  sessions: Pick<SessionRepository, 'create' | 'revoke'>;
  cookieSecure: boolean;
  sessionMaxAgeSeconds: number;
  /** Origins besides the API's own that may send cookie requests (`http.allowed_origins`). */
  allowedOrigins: readonly string[];
}

function sessionCookie(value: string, maxAge: number, secure: boolean): string {
  return [`${SESSION_COOKIE}=${value}`, 'HttpOnly', 'SameSite=Strict', 'Path=/', `Max-Age=${maxAge}`, ...(secure ? ['Secure'] : [])].join('; ');
}

export function authRoutes(deps: AuthRouteDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST', path: '/v1/auth/login', operationId: 'login', tags: ['auth'], auth: 'none',
      summary: 'Exchange an API key for an HttpOnly session cookie',
      body: Type.Object({ api_key: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false }),
      responses: { 204: { description: 'Logged in; `gateway_session` is set.', headers: { 'Set-Cookie': { description: 'gateway_session=…; HttpOnly; SameSite=Strict; Path=/; Secure' } } } },
      errors: { 401: 'Unknown or revoked API key (`unauthorized`).', 403: 'A cross-site login attempt (`csrf_rejected`).' },
      async handle({ body, ctx }) {
        // Login CSRF: a page elsewhere must not log a browser into an account of its choosing. The
        // same rule as for cookie requests: cross-site by Sec-Fetch-Site, or a foreign Origin.
        checkCsrf(ctx, deps.allowedOrigins);
        const key = await deps.apiKeys.findActive(body.api_key);
        if (!key) throw problems.unauthorized('Unknown or revoked API key.');
        const token = await deps.sessions.create(key.tenant_id, key.id);
        return { status: 204, headers: { 'Set-Cookie': sessionCookie(token, deps.sessionMaxAgeSeconds, deps.cookieSecure) } };
      },
    }),
    defineRoute({
      method: 'POST', path: '/v1/auth/logout', operationId: 'logout', tags: ['auth'], auth: 'tenant',
      summary: 'Revoke the current session cookie',
      responses: { 204: { description: 'Logged out; the cookie is cleared.' } },
      async handle({ principal }) {
        if (principal.sessionToken) await deps.sessions.revoke(principal.sessionToken);
        return { status: 204, headers: { 'Set-Cookie': sessionCookie('', 0, deps.cookieSecure) } };
      },
    }),
  ];
}
