import t, { type Test } from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock } from '../common/clock.js';
import { classifyAnswer, fieldValueSendable, verifyOverHttp, type HttpOptions } from './http-verify.js';

const http: HttpOptions = { timeoutMs: 5_000, retryBackoffMs: 1, fetch: globalThis.fetch, clock: systemClock };

/** A server answering every request with `status` and the raw `body`. */
async function answering(t: Test, status: number, body: string | Buffer): Promise<string> {
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/agent`;
}

const name = (body: unknown): string | undefined =>
  typeof body === 'object' && body !== null && typeof (body as { name?: unknown }).name === 'string' ? (body as { name: string }).name : undefined;

t.test('docs/API.md "Agents, routes, numbers and SIP credentials": a 2xx whose body is not JSON, or too large to read, is still found, without a name', async (t) => {
  const notJson = await answering(t, 200, '<html>ok</html>');
  t.same(await verifyOverHttp(http, { url: notJson, headers: { 'x-api-key': 'k1234' } }, () => undefined, name), { outcome: 'found' });
  const huge = await answering(t, 200, Buffer.alloc(2 * 1024 * 1024, 0x20));
  t.same(await verifyOverHttp(http, { url: huge, headers: { 'x-api-key': 'k1234' } }, () => undefined, name), { outcome: 'found' });
  const named = await answering(t, 200, JSON.stringify({ name: 'Reception' }));
  t.same(await verifyOverHttp(http, { url: named, headers: { 'x-api-key': 'k1234' } }, () => undefined, name), { outcome: 'found', name: 'Reception' });
});

t.test('docs/API.md "Agents, routes, numbers and SIP credentials": the common reading of statuses', (t) => {
  t.same(classifyAnswer(200), { outcome: 'found' });
  t.same(classifyAnswer(204), { outcome: 'found' });
  t.same(classifyAnswer(404), { outcome: 'not_found' });
  t.same(classifyAnswer(401), { outcome: 'bad_credentials' });
  t.same(classifyAnswer(403), { outcome: 'bad_credentials' });
  t.same(classifyAnswer(429), { outcome: 'unavailable', reason: 'rate limited by the provider (429)' });
  t.same(classifyAnswer(400), { outcome: 'unavailable', reason: 'unexpected answer (400)' });
  t.same(classifyAnswer(504), { outcome: 'unavailable', reason: 'provider error (504)' });
  t.end();
});

t.test('RFC 9110 5.5: header values the wire can carry unchanged', (t) => {
  t.ok(fieldValueSendable('sk_abc-123'));
  t.ok(fieldValueSendable('Bearer a b'));
  for (const bad of ['', ' lead', 'trail ', 'nul\0', 'cr\r', 'lf\n', 'del\x7f', 'wide\u0100']) {
    t.notOk(fieldValueSendable(bad), JSON.stringify(bad));
  }
  t.end();
});
