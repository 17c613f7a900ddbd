/**
 * @module One declaration per endpoint: its schemas validate the request and document it in
 * OpenAPI, so the contract and the code cannot drift apart.
 */
import type { Context } from 'koa';
import type { Static, TSchema } from '@sinclair/typebox';
import type { ApiState, Principal } from './api-state.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type RouteAuth = 'tenant' | 'none';

export interface ResponseSpec {
  description: string;
  schema?: TSchema;
  /** Media type when not JSON (for example a recording). */
  contentType?: string;
  headers?: Record<string, { description: string }>;
}

export interface RouteInput<B, Q, P, A extends RouteAuth> {
  body: B;
  query: Q;
  params: P;
  principal: A extends 'tenant' ? Principal : undefined;
  ctx: Context & { state: ApiState };
}

/**
 * A response body already serialised as JSON, sent as these bytes: for a page served many times
 * over (the live call list of an api process), which would otherwise be serialised, and its length
 * counted, on every request.
 */
export class SerializedJson {
  private constructor(readonly bytes: Buffer) {}

  static of(value: unknown): SerializedJson {
    return new SerializedJson(Buffer.from(JSON.stringify(value)));
  }
}

export interface RouteResult {
  status: number;
  /** Serialised as JSON, unless it is {@link SerializedJson} already. */
  body?: unknown;
  headers?: Record<string, string>;
}

export interface RouteSpec<B extends TSchema, Q extends TSchema, P extends TSchema, A extends RouteAuth> {
  method: HttpMethod;
  /** OpenAPI-style path: `/v1/calls/{id}`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  auth: A;
  body?: B;
  query?: Q;
  params?: P;
  /** The body may be left out (it is then validated as `{}`); the OpenAPI document says so. */
  bodyOptional?: boolean;
  /** Body size limit for this route, when it differs from the API's default. */
  bodyLimitBytes?: number;
  /**
   * Keep the body text as received in `ctx.request.rawBody` (koa-body `includeUnparsed`), for
   * signatures computed over the exact bytes, and accept any JSON value at the top level (not only
   * objects and arrays): the post-call webhook answers every well-formed payload itself.
   */
  rawBody?: boolean;
  /** Request headers the route reads (the OpenAPI document declares them as header parameters). */
  requestHeaders?: Record<string, { description: string; pattern?: string }>;
  responses: Record<number, ResponseSpec>;
  /** Problem statuses this route can answer with, besides the ones every route shares. */
  errors?: Record<number, string>;
  handle(input: RouteInput<Static<B>, Static<Q>, Static<P>, A>): RouteResult | Promise<RouteResult>;
}

/** A route with its types erased, as the router and the OpenAPI builder hold them. */
export type AnyRoute = RouteSpec<TSchema, TSchema, TSchema, RouteAuth>;

/** Declares a route; the generic parameters are inferred from the schemas. */
export function defineRoute<B extends TSchema, Q extends TSchema, P extends TSchema, A extends RouteAuth>(
  spec: RouteSpec<B, Q, P, A>,
): AnyRoute {
  return spec;
}
