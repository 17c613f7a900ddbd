/**
 * docs/EVENTS.md "Delivery": a connection to an endpoint is kept open and carries the next
 * deliveries (TLS included), but only while the endpoint's name still resolves to the address it
 * was opened to: a changed DNS answer gets a new connection to the new address once it passes the
 * outbound-address policy, and an answer the policy refuses sends nothing, even with a connection
 * open. A kept connection the endpoint resets as a delivery goes out is retried once on a new one.
 */
import t, { type Test } from 'tap';
import { createServer as createHttpServer, type RequestListener, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { OutboundAddressPolicy, type HostResolver } from '../common/outbound-policy.js';
import { FIXTURE_DOMAIN, testPki } from '../../test/support/https-fixture.js';
import { EndpointSender } from './endpoint-sender.js';

const request = (url: string, eventId = 'evt_1'): Parameters<EndpointSender['deliver']>[0] => ({ url, eventId, eventType: 'call.ended', body: '{}', secrets: ['whsec_x'] });
const allowLoopback = new OutboundAddressPolicy({ allowPrivate: false, allowedPrivateNetworks: ['127.0.0.0/8'] });

/** Where the endpoint's name resolves now (changed by the test). */
function dns(address: string): { resolve: HostResolver; set(a: string): void } {
  let current = address;
  return { resolve: () => Promise.resolve([{ address: current, family: 4 }]), set: (a) => { current = a; } };
}

/** Listens on `host`:`port` (0: any), counting connections and requests. */
async function listen(t: Test, server: Server, host: string, port = 0): Promise<{ port: number; connections: number; requests: number }> {
  const seen = { port: 0, connections: 0, requests: 0 };
  server.on('connection', () => { seen.connections++; });
  server.on('secureConnection', () => { /* counted on 'connection' */ });
  server.on('request', () => { seen.requests++; });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  seen.port = (server.address() as AddressInfo).port;
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  return seen;
}

const answer204: RequestListener = (req, res) => { req.resume(); req.on('end', () => res.writeHead(204).end()); };

t.test('deliveries to one endpoint share a connection, TLS included', async (t) => {
  const pki = testPki();
  const server = await listen(t, createHttpsServer({ key: pki.key, cert: pki.cert }, answer204), '127.0.0.1');
  const sender = new EndpointSender({ policy: allowLoopback, allowHttp: false, ca: pki.ca, resolve: dns('127.0.0.1').resolve });
  t.teardown(() => sender.close());
  for (let i = 0; i < 5; i++) t.match(await sender.deliver(request(`https://hooks.${FIXTURE_DOMAIN}:${server.port}/e`, `evt_${i}`)), { ok: true, status: 204 });
  t.equal(server.requests, 5);
  t.equal(server.connections, 1, 'one TLS handshake for five deliveries');
});

t.test('a name that resolves elsewhere gets a connection to the new address; a refused one gets nothing', async (t) => {
  const first = await listen(t, createHttpServer(answer204), '127.0.0.1');
  const second = await listen(t, createHttpServer(answer204), '127.0.0.2', first.port);
  const name = dns('127.0.0.1');
  const sender = new EndpointSender({ policy: allowLoopback, allowHttp: true, resolve: name.resolve });
  t.teardown(() => sender.close());
  const url = `http://hooks.example.com:${first.port}/e`;
  t.match(await sender.deliver(request(url)), { ok: true });
  name.set('127.0.0.2');
  t.match(await sender.deliver(request(url)), { ok: true });
  t.match(await sender.deliver(request(url)), { ok: true });
  t.same([first.requests, second.requests], [1, 2], 'the kept connection to the old address was not used');
  t.equal(second.connections, 1, 'and the new one is kept in turn');
  name.set('10.0.0.1');
  t.match(await sender.deliver(request(url)), { ok: false, error: /^endpoint address refused/ });
  t.same([first.requests, second.requests], [1, 2], 'nothing sent on either kept connection');
});

t.test('a kept connection reset as a delivery goes out: the delivery goes again on a new connection', async (t) => {
  // A keep-alive server that answers a connection's first request and resets it on the second.
  let connections = 0;
  let requests = 0;
  const tcp = createTcpServer((socket: Socket) => {
    connections++;
    let answered = false;
    socket.on('data', (chunk: Buffer) => {
      if (!chunk.includes('\r\n\r\n{}')) return;
      requests++;
      if (answered) socket.resetAndDestroy();
      else socket.write('HTTP/1.1 204 No Content\r\nConnection: keep-alive\r\n\r\n');
      answered = true;
    });
  });
  await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => tcp.close(() => resolve())));
  const sender = new EndpointSender({ policy: allowLoopback, allowHttp: true, resolve: dns('127.0.0.1').resolve });
  t.teardown(() => sender.close());
  const url = `http://hooks.example.com:${(tcp.address() as AddressInfo).port}/e`;
  t.match(await sender.deliver(request(url, 'evt_1')), { ok: true, status: 204 });
  t.match(await sender.deliver(request(url, 'evt_2')), { ok: true, status: 204 }, 'sent again on a new connection');
  t.same({ connections, requests }, { connections: 2, requests: 3 });
});
