/**
 * The OpenAPI document declares what the API really answers (docs/API.md, "Errors"): every
 * operation is driven through the error paths every operation shares (no credentials, a body
 * that is not JSON, a body over the limit, the rate limit) and each status it answers must be
 * declared on it, with the response headers the API sends (RFC 9110 10.2.3 Retry-After,
 * RFC 6750 3 WWW-Authenticate, X-Request-Id), and the Idempotency-Key header declared.
 */
import t from 'tap';
import { buildApp } from '../support/build-app.js';
import type { InjectOptions } from 'light-my-request';

type Json = Record<string, unknown>;
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

t.test('every status an operation answers on the shared error paths is declared, with its headers', async (t) => {
  const app = await buildApp(t, { options: { rateLimitPerSecond: 1, rateLimitBurst: 1 } });
  const request = app.request.bind(app);
  const { auth } = await app.createTenant();
  const doc = (await request({ method: 'GET', url: '/v1/openapi.json' })).json<{ paths: Record<string, Record<string, Json>>; components: { schemas: Record<string, Json> } }>();
  t.notOk('$id' in doc.components.schemas.Problem!, 'the Problem component carries no stray $id');

  let driven = 0;
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS.filter((m) => m in item)) {
      const op = item[method]!;
      const declared = op.responses as Record<string, Json>;
      const url = path.replace(/\{\w+\}/g, 'x');
      const hasBody = 'requestBody' in op;
      const tenant = Array.isArray(op.security) && op.security.length > 0;
      const observed = new Set<number>();
      const send = async (headers: Record<string, string>, payload?: string): Promise<void> => {
        const res = await request({ method: method.toUpperCase() as InjectOptions['method'], url, headers, ...(payload !== undefined ? { payload } : {}) });
        observed.add(res.statusCode);
        t.ok(res.headers['x-request-id'], `${method} ${path}: X-Request-Id on ${res.statusCode}`);
      };
      if (tenant) await send({});
      if (hasBody) {
        await send({ ...auth, 'content-type': 'text/plain' }, 'x');
        await send({ ...auth, 'content-type': 'application/json' }, `{"pad":"${'x'.repeat(2 * 1024 * 1024)}"}`);
      }
      // A burst of one: the second authenticated request meets the rate limit.
      await send(tenant ? auth : {});
      await send(tenant ? auth : {});
      for (const status of observed) t.ok(String(status) in declared, `${method} ${path} answered ${status}: declared`);
      for (const [status, response] of Object.entries(declared)) {
        const headers = (response.headers ?? {}) as Json;
        t.ok('X-Request-Id' in headers, `${method} ${path} ${status} declares X-Request-Id`);
        if (status === '429' || status === '503') t.ok('Retry-After' in headers, `${method} ${path} ${status} declares Retry-After`);
        if (status === '401') t.ok('WWW-Authenticate' in headers, `${method} ${path} 401 declares WWW-Authenticate`);
      }
      if (hasBody) for (const s of ['413', '415']) t.ok(s in declared, `${method} ${path} declares ${s}`);
      driven += 1;
    }
  }
  t.ok(driven > 20, `${driven} operations driven`);
  const place = doc.paths['/v1/calls']!.post!;
  t.match(place.parameters, [{ name: 'Idempotency-Key', in: 'header', required: false }], 'placeCall declares the Idempotency-Key header');
});
