/**
 * @module One structured log line per request: never headers, bodies or query strings. A matched
 * request is logged by its route template; an unknown path by its path with anything shaped like
 * a credential masked (docs/SECURITY.md, Logs), since a key pasted into a URL must not reach a log.
 */
import type { Middleware } from 'koa';
import type { Logger } from '../../common/logger.js';
import type { ApiState } from '../api-state.js';

/** Longest path logged; the rest is cut. */
const MAX_LOGGED_PATH = 200;

/** What a masked token is logged as. */
export const MASK = '[redacted]';

/**
 * API keys (`vgw_live_…`, `vgw_test_…`, any case), any run of 32 or more base64url characters
 * (session tokens, call control ids, JWT segments) and any run of 24 or more letters and digits
 * (hex digests, base62 secrets). The gateway's resource ids (`call_` and 23 letters and digits)
 * stay readable.
 */
const SECRET_SHAPES = /vgw_(?:live|test)_[A-Za-z0-9]*|[A-Za-z0-9_-]{32,}|[A-Za-z0-9]{24,}/gi;

/**
 * Percent-escapes decoded byte by byte (as Latin-1), so `vgw%5Flive%5F…` is masked like the key it
 * spells; unlike decodeURIComponent this cannot fail on a malformed escape and leave one hidden.
 */
const unescaped = (path: string): string => path.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));

/** The path as logged for an unknown endpoint: decoded, credential shapes masked, bounded. */
export function loggablePath(path: string): string {
  const withoutQuery = path.split('?', 1)[0]!;
  return unescaped(withoutQuery).replace(SECRET_SHAPES, MASK).slice(0, MAX_LOGGED_PATH);
}

export function accessLog(logger: Logger): Middleware<ApiState> {
  return async (ctx, next) => {
    const start = performance.now();
    try {
      await next();
    } finally {
      logger.info({
        request_id: ctx.state.requestId, method: ctx.method, route: ctx.state.routeTemplate ?? loggablePath(ctx.path),
        status: ctx.status, ms: Math.round((performance.now() - start) * 10) / 10, tenant_id: ctx.state.principal?.tenantId,
      }, 'http');
    }
  };
}
