/**
 * @module Builds the OpenAPI 3.1 document (GET /v1/openapi.json) from the declared routes. Schemas
 * marked with `x-component` become named components; everything else is inlined as it validates.
 */
import type { TSchema } from '@sinclair/typebox';
import { ProblemSchema } from '../problem.js';
import type { AnyRoute } from '../route.js';

type Json = Record<string, unknown>;

export const API_VERSION = '1.0.0';

/** Marks a schema as a named component of the document (`Call`, `Agent`, ...). */
export const component = (name: string): Record<string, string> => ({ 'x-component': name });

const SHARED_ERRORS: Record<number, string> = {
  400: 'The request is not valid (`validation_failed`).',
  429: 'Too many requests (`rate_limited`); see Retry-After.',
  500: 'The gateway failed (`internal_error`); the body carries no internals.',
};
const TENANT_ERRORS: Record<number, string> = {
  401: 'Missing, malformed, unknown or revoked credentials (`unauthorized`).',
  403: 'A session-cookie request failed the CSRF check (`csrf_rejected`).',
};

/** docs/API.md, Body limits: what any route that reads a body may answer before its handler runs. */
const BODY_ERRORS: Record<number, string> = {
  413: 'The body is over the route\'s limit, by its Content-Length or as it arrives (`payload_too_large`).',
  415: 'The request body is not `application/json`, or its Content-Encoding is unsupported (`unsupported_media_type`).',
  429: 'Too many requests (`rate_limited`), or too many large bodies from this address at once; see Retry-After.',
};
/** Routes whose limit is raised above the default may also meet the gateway-wide cap on large bodies. */
const LARGE_BODY_ERRORS: Record<number, string> = {
  503: 'Too many large bodies are being read at once (`unavailable`); see Retry-After.',
};

/** Plain JSON copy (drops TypeBox's symbol keys), with components hoisted into `components`. */
function hoist(schema: TSchema, components: Json): Json {
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (typeof node !== 'object' || node === null) return node;
    const out: Json = {};
    for (const [k, v] of Object.entries(node)) if (k !== 'x-component') out[k] = walk(v);
    const name = (node as Json)['x-component'];
    if (typeof name === 'string') {
      components[name] = out;
      return { $ref: `#/components/schemas/${name}` };
    }
    return out;
  };
  return walk(JSON.parse(JSON.stringify(schema))) as Json;
}

function parameters(schema: TSchema | undefined, where: 'path' | 'query', components: Json): Json[] {
  if (!schema) return [];
  const object = hoist(schema, components);
  const required = new Set((object.required as string[] | undefined) ?? []);
  return Object.entries((object.properties as Record<string, Json> | undefined) ?? {}).map(([name, s]) => ({
    name, in: where, required: where === 'path' || required.has(name), schema: s,
    ...(typeof s.description === 'string' ? { description: s.description } : {}),
  }));
}

/** Response headers by status (docs/API.md): every answer carries X-Request-Id. */
const REQUEST_ID_HEADER = { 'X-Request-Id': { description: 'The request id, echoed when the client sent a sane one; the log carries it too.', schema: { type: 'string' } } };
const RETRY_AFTER_HEADER = { 'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'integer', minimum: 1 } } };
const STATUS_HEADERS: Record<string, Json> = {
  401: { 'WWW-Authenticate': { description: 'RFC 6750 3: `Bearer realm="voice-gateway"`.', schema: { type: 'string' } } },
  429: RETRY_AFTER_HEADER,
  503: RETRY_AFTER_HEADER,
};
/** Every operation with a body can meet these before its handler runs. */
function problemResponse(description: string): Json {
  return { description, content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } };
}

function withHeaders(status: string, response: Json): Json {
  const headers = { ...REQUEST_ID_HEADER, ...(STATUS_HEADERS[status] ?? {}), ...((response.headers as Json | undefined) ?? {}) };
  return { ...response, headers };
}

function headerParameters(route: AnyRoute): Json[] {
  return Object.entries(route.requestHeaders ?? {}).map(([name, h]) => ({
    name, in: 'header', required: false, description: h.description, schema: { type: 'string', ...(h.pattern ? { pattern: h.pattern } : {}) },
  }));
}

function operation(route: AnyRoute, components: Json): Json {
  const responses: Json = {};
  for (const [status, r] of Object.entries(route.responses)) {
    const content = r.schema ? { [r.contentType ?? 'application/json']: { schema: hoist(r.schema, components) } }
      : r.contentType ? { [r.contentType]: {} } : undefined;
    const headers = r.headers ? Object.fromEntries(Object.entries(r.headers).map(([h, d]) => [h, { description: d.description, schema: { type: 'string' } }])) : undefined;
    responses[status] = { description: r.description, ...(content ? { content } : {}), ...(headers ? { headers } : {}) };
  }
  const bodyErrors = route.body ? { ...BODY_ERRORS, ...(route.bodyLimitBytes !== undefined ? LARGE_BODY_ERRORS : {}) } : {};
  const errors = { ...SHARED_ERRORS, ...(route.auth === 'tenant' ? TENANT_ERRORS : {}), ...bodyErrors, ...route.errors };
  for (const [status, description] of Object.entries(errors)) responses[status] ??= problemResponse(description);
  for (const [status, response] of Object.entries(responses)) responses[status] = withHeaders(status, response as Json);
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    tags: route.tags,
    security: route.auth === 'tenant' ? [{ BearerAuth: [] }, { CookieAuth: [] }] : [],
    parameters: [...parameters(route.params, 'path', components), ...parameters(route.query, 'query', components), ...headerParameters(route)],
    ...(route.body ? { requestBody: { required: route.bodyOptional !== true, content: { 'application/json': { schema: hoist(route.body, components) } } } } : {}),
    responses,
  };
}

export function buildOpenApiDocument(routes: readonly AnyRoute[]): Json {
  const components: Json = {};
  hoist({ ...ProblemSchema, 'x-component': 'Problem' }, components);
  // TypeBox's $id names the schema for the validator; in the document the component name does.
  delete (components.Problem as Json).$id;
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route, components);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Voice Gateway HTTP API',
      version: API_VERSION,
      description: 'Multi-tenant programmable voice gateway: calls, carriers, phone numbers, agents and routing. Errors are RFC 9457 problem+json with a stable `code`.',
    },
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(components).sort(([a], [b]) => a.localeCompare(b))),
      securitySchemes: {
        BearerAuth: { type: 'http', scheme: 'bearer', description: 'A tenant API key: `vgw_live_…`, or `vgw_test_…` for the sandbox.' },
        CookieAuth: { type: 'apiKey', in: 'cookie', name: 'gateway_session', description: 'HttpOnly session cookie issued by POST /v1/auth/login.' },
      },
    },
  };
}
