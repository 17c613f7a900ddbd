/**
 * Errors on the wire (docs/API.md, "Errors"): a JSON body must be UTF-8 (RFC 8259 section 8.1),
 * and even the requests Node's HTTP parser rejects before the app (RFC 6585 section 5: 431; a
 * malformed request: 400) are answered with problem+json and an X-Request-Id.
 */
import t from 'tap';
import { connect } from 'node:net';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { buildApp } from '../support/build-app.js';
import { createApiServer } from '../../src/control-api/http-server.js';

t.test('RFC 8259 8.1: a body with invalid UTF-8 is 400 validation_failed and stores nothing', async (t) => {
  const app = await buildApp(t);
  const request = app.request.bind(app);
  const { auth } = await app.createTenant();
  const bad = Buffer.concat([Buffer.from('{"username":"alice","password":"ok-'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}')]);
  const res = await request({ method: 'POST', url: '/v1/sip-credentials', headers: { ...auth, 'content-type': 'application/json' }, payload: bad });
  t.equal(res.statusCode, 400);
  t.match(res.headers['content-type'], /application\/problem\+json/);
  t.equal(res.json().code, 'validation_failed');
  t.match(res.json().detail, /UTF-8/);
  t.ok(res.headers['x-request-id']);
  const list = await request({ method: 'GET', url: '/v1/sip-credentials', headers: auth });
  t.same(list.json().data, [], 'nothing was stored');

  const good = await request({ method: 'POST', url: '/v1/sip-credentials', headers: { ...auth, 'content-type': 'application/json' }, payload: Buffer.from('{"username":"zoe","password":"pâss-😀"}') });
  t.equal(good.statusCode, 201, `valid multi-byte UTF-8 is accepted: ${good.body}`);
});

async function rawExchange(port: number, bytes: string): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let answer = '';
  socket.on('data', (d: Buffer) => { answer += d.toString(); });
  socket.on('error', () => undefined);
  socket.write(bytes);
  await once(socket, 'close');
  return answer;
}

function problemOf(answer: string): { status: number; headers: string; body: Record<string, unknown> } {
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), headers: head, body: JSON.parse(body) as Record<string, unknown> };
}

t.test('RFC 6585 5 / RFC 9110 15.5.1: Node-level 431 and 400 are problem+json with a request id', async (t) => {
  const server = createApiServer((_req, res) => { res.end('app reached'); });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;

  const big = problemOf(await rawExchange(port, `GET /v1/calls?${'q'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`));
  t.equal(big.status, 431);
  t.match(big.headers, /Content-Type: application\/problem\+json/);
  t.match(big.headers, /X-Request-Id: [0-9a-f-]{36}/);
  t.match(big.body, { status: 431, code: 'headers_too_large', type: 'about:blank' });
  t.equal(big.body.request_id, /X-Request-Id: (\S+)/.exec(big.headers)?.[1], 'the body carries the same request id');

  const garbage = problemOf(await rawExchange(port, '\x16\x03\x01 not http at all\r\n\r\n'));
  t.equal(garbage.status, 400);
  t.match(garbage.body, { status: 400, code: 'bad_request' });
  t.match(garbage.headers, /X-Request-Id: /);
});
