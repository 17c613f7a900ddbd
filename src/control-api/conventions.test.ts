import t, { type Test } from 'tap';
import { gzipSync } from 'node:zlib';
import { Type } from '@sinclair/typebox';
import { Validator } from '@seriousme/openapi-schema-validator';
import { defineRoute } from './route.js';
import { buildApp } from '../../test/support/build-app.js';

const PROBLEM_KEYS = ['code', 'detail', 'request_id', 'status', 'title', 'type'];

/** A test-only endpoint with a body schema and one that fails like a bug would. */
const probeRoutes = () => [
  defineRoute({
    method: 'POST', path: '/v1/probe', operationId: 'probe', summary: 'probe', tags: ['test'], auth: 'tenant',
    body: Type.Object({ to: Type.String({ pattern: '^\\+[1-9][0-9]{1,14}$' }), record: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
    responses: { 200: { description: 'echo' } },
    handle: ({ body }) => ({ status: 200, body }),
  }),
  defineRoute({
    method: 'GET', path: '/v1/boom', operationId: 'boom', summary: 'boom', tags: ['test'], auth: 'tenant',
    responses: { 200: { description: 'never' } },
    handle: () => { throw new Error('SELECT secret FROM internals at /srv/app.js:1'); },
  }),
];

function assertProblem(t: Test, res: { statusCode: number; headers: Record<string, unknown>; body: string }, status: number, code: string): Record<string, unknown> {
  t.equal(res.statusCode, status, `${code}: status`);
  t.equal(res.headers['content-type'], 'application/problem+json', `${code}: RFC 9457 media type`);
  const body = JSON.parse(res.body) as Record<string, unknown>;
  t.same(Object.keys(body).filter((k) => PROBLEM_KEYS.includes(k)).sort(), PROBLEM_KEYS, `${code}: every problem member`);
  t.equal(body.code, code);
  t.equal(body.status, status);
  t.equal(body.request_id, res.headers['x-request-id'], `${code}: request_id matches X-Request-Id`);
  return body;
}

t.test('docs/API.md "Errors": problem+json on every error path', async (t) => {
  const h = await buildApp(t, { routes: probeRoutes });
  const { auth } = await h.createTenant();
  const json = { ...auth, 'content-type': 'application/json' };

  const malformed = assertProblem(t, await h.request({ method: 'POST', url: '/v1/probe', headers: json, payload: '{"to": ' }), 400, 'validation_failed');
  t.match(malformed.detail, /not valid JSON/);
  const unknown = assertProblem(t, await h.request({ method: 'POST', url: '/v1/probe', headers: json, payload: { to: '+15550100', extra: 1 } }), 400, 'validation_failed');
  t.same(unknown.errors, [{ path: '/extra', message: 'is not a known field' }], 'docs/API.md "Requests and responses": unknown fields are named');
  const bad = assertProblem(t, await h.request({ method: 'POST', url: '/v1/probe', headers: json, payload: { to: '5550100', record: 'yes' } }), 400, 'validation_failed');
  t.same((bad.errors as { path: string }[]).map((e) => e.path).sort(), ['/record', '/to']);
  assertProblem(t, await h.request({ method: 'POST', url: '/v1/probe', headers: json, payload: '[1]' }), 400, 'validation_failed');
  assertProblem(t, await h.request({ method: 'POST', url: '/v1/probe', headers: { ...auth, 'content-type': 'text/plain' }, payload: 'to=+1' }), 415, 'unsupported_media_type');
  assertProblem(t, await h.request({ method: 'POST', url: '/v1/probe', headers: json, payload: JSON.stringify({ to: 'x'.repeat(70 * 1024) }) }), 413, 'payload_too_large');
  const notGzip = await h.request({ method: 'POST', url: '/v1/probe', headers: { ...json, 'content-encoding': 'gzip' }, payload: Buffer.from('definitely not gzip') });
  assertProblem(t, notGzip, 400, 'validation_failed');
  assertProblem(t, await h.request({ method: 'POST', url: '/v1/probe', headers: { ...json, 'content-encoding': 'br2' }, payload: '{}' }), 415, 'unsupported_media_type');
  const gzipped = await h.request({ method: 'POST', url: '/v1/probe', headers: { ...json, 'content-encoding': 'gzip' }, payload: gzipSync(JSON.stringify({ to: '+15550100' })) });
  t.equal(gzipped.statusCode, 200, 'a well-formed gzip body is accepted');
  assertProblem(t, await h.request({ method: 'GET', url: '/v1/nowhere', headers: auth }), 404, 'not_found');
  assertProblem(t, await h.request({ method: 'DELETE', url: '/v1/tenant', headers: auth }), 405, 'method_not_allowed');
  assertProblem(t, await h.request({ method: 'GET', url: '/v1/tenant?limit=5', headers: auth }), 400, 'validation_failed');
  assertProblem(t, await h.request({ method: 'GET', url: '/v1/numbers?limit=501', headers: auth }), 400, 'validation_failed');
  assertProblem(t, await h.request({ method: 'GET', url: '/v1/numbers?cursor=bm90LWEtY3Vyc29y', headers: auth }), 400, 'validation_failed');

  const boom = assertProblem(t, await h.request({ method: 'GET', url: '/v1/boom', headers: auth }), 500, 'internal_error');
  t.notMatch(JSON.stringify(boom), /SELECT|internals|srv|stack/, 'a 5xx carries no internals');
  t.ok(h.logLines.some((l) => l.includes('unhandled error') && l.includes('SELECT secret')), 'the bug is logged for the operator');

  const ok = await h.request({ method: 'POST', url: '/v1/probe', headers: json, payload: { to: '+15550100' } });
  t.equal(ok.statusCode, 200, 'the probe itself works');
});

t.test('docs/API.md "Requests and responses": X-Request-Id is echoed when sane and generated otherwise', async (t) => {
  const h = await buildApp(t);
  const echoed = await h.request({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'abc-123' } });
  t.equal(echoed.headers['x-request-id'], 'abc-123');
  const generated = await h.request({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'bad id\twith spaces' } });
  t.match(generated.headers['x-request-id'], /^[0-9a-f-]{36}$/);
});

t.test('docs/API.md "Errors": 429 rate_limited with Retry-After, per key', async (t) => {
  const h = await buildApp(t, { options: { rateLimitPerSecond: 3, rateLimitBurst: 2 } });
  const a = await h.createTenant('A');
  const b = await h.createTenant('B');
  const statuses: number[] = [];
  for (let i = 0; i < 7; i++) statuses.push((await h.request({ method: 'GET', url: '/v1/tenant', headers: a.auth })).statusCode);
  t.same(statuses, [200, 200, 200, 200, 200, 429, 429], '3 per second plus a burst of 2');
  const limited = await h.request({ method: 'GET', url: '/v1/tenant', headers: a.auth });
  assertProblem(t, limited, 429, 'rate_limited');
  t.ok(Number(limited.headers['retry-after']) >= 1, 'Retry-After in seconds');
  t.equal((await h.request({ method: 'GET', url: '/v1/tenant', headers: b.auth })).statusCode, 200, 'another key has its own budget');
});

t.test('health, readiness and metrics', async (t) => {
  let draining = false;
  const h = await buildApp(t, { draining: () => draining });
  t.equal((await h.request({ method: 'GET', url: '/healthz' })).statusCode, 200);
  t.equal((await h.request({ method: 'GET', url: '/readyz' })).statusCode, 200);
  draining = true;
  const notReady = await h.request({ method: 'GET', url: '/readyz' });
  t.equal(notReady.statusCode, 503);
  t.same(JSON.parse(notReady.body), { status: 'unavailable', reason: 'draining' });
  const metrics = await h.request({ method: 'GET', url: '/metrics' });
  t.match(metrics.headers['content-type'], /^text\/plain/);
  t.match(metrics.body, /vgw_http_requests_total\{method="GET",route="\/readyz",status="503"\} 1/);
});

t.test('docs/API.md "Requests and responses": GET /v1/openapi.json is a valid OpenAPI 3.1 document, version 1.0.0', async (t) => {
  const h = await buildApp(t);
  const res = await h.request({ method: 'GET', url: '/v1/openapi.json' });
  t.equal(res.statusCode, 200);
  const doc = JSON.parse(res.body);
  t.equal(doc.openapi, '3.1.0');
  t.equal(doc.info.version, '1.0.0');
  const result = await new Validator().validate(doc);
  t.same(result.errors ?? [], [], 'no schema errors');
  t.ok(result.valid, 'valid against the OpenAPI 3.1 schema');
  t.ok(doc.paths['/v1/auth/login'].post, 'routes are documented');
  t.same(doc.paths['/v1/tenant'].get.security, [{ BearerAuth: [] }, { CookieAuth: [] }]);
  t.ok(doc.components.schemas.Problem && doc.components.schemas.Tenant, 'named components');
  t.equal(doc.paths['/v1/numbers'].get.parameters.find((p: { name: string }) => p.name === 'limit').schema.maximum, 500);
  t.equal(doc.paths['/v1/calls/{id}/hold'].post.requestBody.required, false, 'hold takes no body: an optional one is documented as optional');
  t.equal(doc.paths['/v1/calls/transfer'].post.requestBody.required, true);
});
