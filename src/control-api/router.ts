/**
 * @module Mounts declared routes on a Koa router with, per route: authentication and CSRF, rate
 * limiting, JSON body parsing with a size limit, and validation of params, query and body.
 */
import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { Type, type TSchema } from '@sinclair/typebox';
import { jsonBody } from './middleware/json-body.js';
import { ApiError } from '../common/errors.js';
import { compileValidator, type ValidationResult } from '../common/schema.js';
import type { ApiState, Principal } from './api-state.js';
import { authenticate, checkCsrf, type AuthDeps } from './middleware/tenant-auth.js';
import type { RequestRateLimiter } from './middleware/rate-limit.js';
import { closeAfterAnswer, type BodyAdmission } from './middleware/body-admission.js';
import { problems } from './problem.js';
import { SerializedJson, type AnyRoute } from './route.js';

export interface RouterDeps {
  auth: AuthDeps;
  rateLimiter: RequestRateLimiter;
  allowedOrigins: readonly string[];
  bodyLimitBytes: number;
  bodyAdmission: BodyAdmission;
}

type Ctx = Context & { state: ApiState };
type Check = (value: unknown) => ValidationResult<unknown>;

const EMPTY = Type.Object({}, { additionalProperties: false });

/** `/v1/calls/{id}` → `/v1/calls/:id`. */
export const toKoaPath = (path: string): string => path.replace(/\{(\w+)\}/g, ':$1');

function validated(check: Check, value: unknown, where: string): unknown {
  const result = check(value);
  if (result.ok) return result.value;
  const prefix = where === 'body' ? '' : `/${where}`;
  throw problems.validation(result.issues.map((i) => ({ path: prefix + i.path, message: i.message })));
}

/** Names of a query schema's integer and number parameters. */
function numericParams(schema: TSchema | undefined): string[] {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> } | undefined)?.properties ?? {};
  return Object.keys(properties).filter((name) => properties[name]!.type === 'integer' || properties[name]!.type === 'number');
}

/**
 * docs/API.md, Query parameters: numbers in a query string are plain decimal digits. Ajv's type
 * coercion follows JavaScript's Number(), which also reads `0x10`, `1e1`, ` 5` and `+5`; each of
 * those is refused here before the schema sees it.
 */
function checkDecimal(query: Record<string, unknown>, names: readonly string[]): void {
  const issues = names.filter((name) => typeof query[name] === 'string' && !/^[0-9]+$/.test(query[name]))
    .map((name) => ({ path: `/query/${name}`, message: 'must be written in decimal digits only' }));
  if (issues.length > 0) throw problems.validation(issues);
}

function isJson(ctx: Ctx): boolean {
  return ctx.is('application/json', 'application/*+json') !== false;
}

function hasBody(ctx: Ctx): boolean {
  const length = ctx.get('Content-Length');
  return (length !== '' && length !== '0') || ctx.get('Transfer-Encoding') !== '';
}

function bodyParser(limit: number, rawBody: boolean): Middleware<ApiState> {
  return jsonBody(limit, rawBody);
}

/**
 * A request whose credentials fail is unauthenticated, so it spends from its client address's
 * allowance (docs/API.md, Rate limits): a flood of guessed keys meets 429 like any other
 * unauthenticated traffic, while valid keys keep their own allowance.
 */
async function authenticateCounted(ctx: Ctx, deps: RouterDeps): Promise<Principal> {
  try {
    return await authenticate(ctx, deps.auth);
  } catch (err) {
    await deps.rateLimiter.consume(`ip:${ctx.ip}`);
    throw err;
  }
}

function mount(router: Router<ApiState>, route: AnyRoute, deps: RouterDeps): void {
  const checkParams: Check = compileValidator(route.params ?? Type.Object({}), { coerceTypes: true });
  const checkQuery: Check = compileValidator(route.query ?? EMPTY, { coerceTypes: true });
  const decimalParams = numericParams(route.query);
  const checkBody: Check | undefined = route.body ? compileValidator(route.body) : undefined;
  const limit = route.bodyLimitBytes ?? deps.bodyLimitBytes;
  const parse = checkBody ? bodyParser(limit, route.rawBody === true) : undefined;

  const admit = async (ctx: Ctx, next: () => Promise<unknown>): Promise<unknown> => {
    if (route.auth === 'tenant') {
      const principal = await authenticateCounted(ctx, deps);
      if (principal.via === 'cookie') checkCsrf(ctx, deps.allowedOrigins);
      ctx.state.principal = principal;
      await deps.rateLimiter.consume(`key:${principal.apiKeyId}`);
    } else {
      await deps.rateLimiter.consume(`ip:${ctx.ip}`);
    }
    if (!hasBody(ctx)) return next();
    if (!parse) throw problems.validation([{ path: '', message: 'this endpoint takes no body' }], 'This endpoint takes no request body.');
    if (!isJson(ctx)) throw new ApiError(415, 'unsupported_media_type', 'The request body must be application/json.');
    const release = deps.bodyAdmission.admit(ctx, limit);
    try {
      return await parse(ctx, next);
    } finally {
      release();
    }
  };

  const guard: Middleware<ApiState> = async (ctx, next) => {
    ctx.state.routeTemplate = route.path;
    try {
      await admit(ctx, next);
    } catch (err) {
      // A body refused before or while it is read is not drained: the connection closes instead
      // (docs/SECURITY.md, Request bodies).
      if (!ctx.req.complete) {
        ctx.set('Connection', 'close');
        closeAfterAnswer(ctx);
      }
      throw err;
    }
  };

  const handler: Middleware<ApiState> = async (ctx) => {
    const params = validated(checkParams, { ...ctx.params }, 'params');
    checkDecimal(ctx.query, decimalParams);
    const query = validated(checkQuery, { ...ctx.query }, 'query');
    const body = checkBody ? validated(checkBody, hasBody(ctx) ? ctx.request.body : {}, 'body') : undefined;
    const result = await route.handle({ body, query, params, principal: ctx.state.principal, ctx });
    ctx.status = result.status;
    for (const [name, value] of Object.entries(result.headers ?? {})) ctx.set(name, value);
    if (result.body instanceof SerializedJson) {
      // The type first: Koa would call bytes without one application/octet-stream.
      ctx.type = 'application/json';
      ctx.body = result.body.bytes;
    } else if (result.body !== undefined) {
      ctx.body = result.body;
    }
  };

  router.register(toKoaPath(route.path), [route.method], [guard, handler]);
}

export function buildRouter(routes: readonly AnyRoute[], deps: RouterDeps): Router<ApiState> {
  const router = new Router<ApiState>();
  for (const route of routes) mount(router, route, deps);
  return router;
}
