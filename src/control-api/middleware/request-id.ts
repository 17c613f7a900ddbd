/** @module Every response carries X-Request-Id, echoed from the request when it is sane. */
import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { ApiState } from '../api-state.js';

// Echo only ids a log line can carry safely: no control characters, bounded length.
const SAFE_ID = /^[\w.:@/+=-]{1,128}$/;

export function requestId(): Middleware<ApiState> {
  return async (ctx, next) => {
    const given = ctx.get('X-Request-Id');
    ctx.state.requestId = SAFE_ID.test(given) ? given : randomUUID();
    ctx.set('X-Request-Id', ctx.state.requestId);
    await next();
  };
}
