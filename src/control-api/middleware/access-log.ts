/** @module One structured log line per request: never headers, bodies or query strings. */
import type { Middleware } from 'koa';
import type { Logger } from '../../common/logger.js';
import type { ApiState } from '../api-state.js';

export function accessLog(logger: Logger): Middleware<ApiState> {
  return async (ctx, next) => {
    const start = performance.now();
    try {
      await next();
    } finally {
      logger.info({
        request_id: ctx.state.requestId, method: ctx.method, route: ctx.state.routeTemplate ?? ctx.path.slice(0, 200),
        status: ctx.status, ms: Math.round((performance.now() - start) * 10) / 10, tenant_id: ctx.state.principal?.tenantId,
      }, 'http');
    }
  };
}
