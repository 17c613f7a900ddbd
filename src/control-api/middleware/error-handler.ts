/**
 * @module Turns every failure into problem+json. ApiErrors carry their own status and code; body
 * parser errors are mapped to theirs; anything else is a bug, logged with its stack and answered
 * with a generic 500 that carries no internals.
 */
import type { Middleware } from 'koa';
import type { Logger } from '../../common/logger.js';
import { ApiError } from '../../common/errors.js';
import { isStorageFailure } from '../../common/storage-failure.js';
import type { ApiState } from '../api-state.js';
import { PROBLEM_CONTENT_TYPE, toProblem } from '../problem.js';

/**
 * Seconds a client is told to wait when storage is unavailable: a lock held by another process
 * is usually gone within seconds (docs/RELIABILITY.md, storage failures).
 */
export const STORAGE_RETRY_AFTER_S = 2;

/** A database locked past the busy time-out, a full or failing disk: 503 `unavailable`, nothing was changed. */
function fromStorageFailure(err: unknown): ApiError | undefined {
  if (!isStorageFailure(err)) return undefined;
  return new ApiError(503, 'unavailable', 'Storage is unavailable; try again later.', { cause: err, headers: { 'Retry-After': String(STORAGE_RETRY_AFTER_S) } });
}

/** Errors raised by koa-body / raw-body carry `status` and `type`; map the ones a client causes. */
function fromHttpError(err: unknown): ApiError | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const { status, type, code } = err as { status?: unknown; type?: unknown; code?: unknown };
  // A body whose Content-Encoding does not decode fails inside zlib: corrupt gzip/deflate with a
  // Z_* code, corrupt brotli with an ERR__ERROR_* code.
  if (typeof code === 'string' && (code.startsWith('Z_') || code.startsWith('ERR__ERROR_'))) return new ApiError(400, 'validation_failed', 'The request body could not be decompressed.', { errors: [] });
  if (type === 'encoding.unsupported') return new ApiError(415, 'unsupported_media_type', 'That Content-Encoding is not supported.');
  if (status === 413 || type === 'entity.too.large') return new ApiError(413, 'payload_too_large', 'The request body is too large.');
  if (status === 415) return new ApiError(415, 'unsupported_media_type', 'The request body must be application/json.');
  if (status === 400 || type === 'entity.parse.failed') return new ApiError(400, 'validation_failed', 'The request body is not valid JSON.', { errors: [] });
  if (type === 'request.aborted') return new ApiError(400, 'validation_failed', 'The request body was cut short.', { errors: [] });
  return undefined;
}

export function errorHandler(logger: Logger): Middleware<ApiState> {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw new ApiError(404, 'not_found', 'No such endpoint.');
      if (ctx.status === 405 && ctx.body === undefined) throw new ApiError(405, 'method_not_allowed', 'That method is not allowed on this endpoint.');
    } catch (err) {
      let apiError = err instanceof ApiError ? err : (fromStorageFailure(err) ?? fromHttpError(err));
      if (!apiError) {
        logger.error({ err, request_id: ctx.state.requestId, route: ctx.state.routeTemplate }, 'unhandled error');
        apiError = new ApiError(500, 'internal_error', 'internal error', { cause: err });
      } else if (apiError.status >= 500) {
        logger.warn({ code: apiError.code, cause: apiError.cause, request_id: ctx.state.requestId }, apiError.message);
      }
      ctx.status = apiError.status;
      for (const [name, value] of Object.entries(apiError.headers)) ctx.set(name, value);
      ctx.body = toProblem(apiError, ctx.state.requestId);
      ctx.type = PROBLEM_CONTENT_TYPE;
    }
  };
}
