import t, { type Test } from 'tap';
import { execFileSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../../common/clock.js';
import { SipHeaders, SipRequest, type SipMessage } from '../messages/sip-message.js';
import { createResponse } from '../messages/response.js';
import { parseMessage } from '../messages/parse.js';
import { formatHost } from '../grammar/uri.js';
import { TransportLayer, type ListenOptions, type TransportLayerOptions } from './transport-layer.js';
import { TransportError } from './transport-error.js';
import type { MessageSource, TransportProtocol } from './transport.js';
import type { TlsOptions } from './stream-transport.js';
import { needAvailable } from '../../../../test/support/peers.js';

interface Received {
  message: SipMessage;
  source: MessageSource;
}

/** A TransportLayer on loopback port 0 whose deliveries can be awaited in order. */
async function startLayer(t: Test, listen: ListenOptions[], extra: Partial<TransportLayerOptions> = {}) {
  const inbox: Received[] = [];
  const waiters: (() => void)[] = [];
  const dropped: string[] = [];
  const malformed: number[] = [];
  const layer = new TransportLayer({
    listen,
    delegate: {
      onMessage: (message, source) => {
        inbox.push({ message, source });
        waiters.shift()?.();
      },
      onDropped: (reason) => dropped.push(reason),
      onMalformed: (e) => malformed.push(e.status),
    },
    ...extra,
  });
  await layer.start();
  t.teardown(() => layer.stop());
  let taken = 0;
  const next = async (): Promise<Received> => {
    if (inbox.length <= taken) await new Promise<void>((resolve) => waiters.push(resolve));
    return inbox[taken++]!;
  };
  return { layer, next, inbox, dropped, malformed };
}

function options(protocol: TransportProtocol, host: string, port: number, branch: string): SipRequest {
  const h = new SipHeaders()
    .append('Via', `SIP/2.0/${protocol} ${formatHost(host)}:${port};branch=${branch};rport`)
    .append('Max-Forwards', '70')
    .append('From', `<sip:a@${formatHost(host)}>;tag=1`)
    .append('To', `<sip:b@${formatHost(host)}>`)
    .append('Call-ID', `${branch}@test`)
    .append('CSeq', '1 OPTIONS');
  return new SipRequest('OPTIONS', `sip:b@${formatHost(host)}`, h);
}

/** A self-signed certificate for 127.0.0.1, ::1 and localhost, made with the openssl CLI. */
function selfSigned(): TlsOptions | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'vgw-tls-'));
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost',
      '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1',
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
    const cert = readFileSync(join(dir, 'cert.pem'));
    return { cert, key: readFileSync(join(dir, 'key.pem')), ca: cert };
  } catch {
    return undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const tlsMaterial = selfSigned();

const CASES: { protocol: TransportProtocol; host: string }[] = [
  { protocol: 'UDP', host: '127.0.0.1' },
  { protocol: 'TCP', host: '127.0.0.1' },
  { protocol: 'TLS', host: '127.0.0.1' },
  { protocol: 'UDP', host: '::1' },
  { protocol: 'TCP', host: '::1' },
  { protocol: 'TLS', host: '::1' },
];

for (const { protocol, host } of CASES) {
  t.test(`RFC 3261 18 / RFC 3581: ${protocol} over ${host} round trip with rport and received`, async (t) => {
    if (protocol === 'TLS' && !needAvailable(t, tlsMaterial, 'needs certificates made by openssl (apt-get install openssl)')) return;
    const tls = protocol === 'TLS' ? tlsMaterial : undefined;
    const listen = (): ListenOptions[] => [{ protocol, host, port: 0, ...(tls ? { tls } : {}) }];
    const a = await startLayer(t, listen());
    const b = await startLayer(t, listen());
    const aPoint = a.layer.listeningPoint(protocol)!;
    const bPoint = b.layer.listeningPoint(protocol)!;
    // The sent-by names a domain, so B must add received (18.2.1) and fill rport (RFC 3581 4).
    const req = options(protocol, host, aPoint.port, 'z9hG4bKrt1');
    req.headers.set('Via', `SIP/2.0/${protocol} client.invalid:${aPoint.port};branch=z9hG4bKrt1;rport`);
    await a.layer.send(req, { protocol, address: host, port: bPoint.port });
    const got = await b.next();
    t.equal(got.message.kind, 'request');
    const via = got.message.topVia;
    t.equal(via.received, host);
    t.equal(typeof via.rport, 'number');
    t.equal(got.source.address, host);
    if (protocol !== 'UDP') t.ok(got.source.connection, 'stream sources carry their connection');
    if (got.message.kind !== 'request') return;
    await b.layer.sendResponse(createResponse(got.message, 200, undefined, { toTag: 'b1' }), got.source);
    const answer = await a.next();
    t.equal(answer.message.kind === 'response' && answer.message.status, 200);
    t.equal(answer.message.to.tag, 'b1');
    if (protocol !== 'UDP') {
      await a.layer.send(options(protocol, host, aPoint.port, 'z9hG4bKrt2'), { protocol, address: host, port: bPoint.port });
      const second = await b.next();
      t.equal(second.source.connection?.id, got.source.connection?.id, 'connection reused for the same address and port');
    }
  });
}

t.test('RFC 3261 18.3: TCP framing of split and joined messages, and CRLF keep-alive pong', async (t) => {
  const b = await startLayer(t, [{ protocol: 'TCP', host: '127.0.0.1', port: 0 }]);
  const port = b.layer.listeningPoint('TCP')!.port;
  const socket = connect({ host: '127.0.0.1', port });
  t.teardown(() => socket.destroy());
  await new Promise((resolve) => socket.once('connect', resolve));
  const wire = (branch: string): Buffer => {
    const r = options('TCP', '127.0.0.1', 5060, branch);
    r.body = Buffer.from('hello');
    r.headers.set('Content-Type', 'text/plain');
    return Buffer.from(`${r.method} ${r.uri} SIP/2.0\r\n${[...r.headers.entries()].map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\nContent-Length: 5\r\n\r\nhello`);
  };
  const one = wire('z9hG4bKs1');
  socket.write(one.subarray(0, 10));
  await new Promise((r) => setTimeout(r, 20));
  socket.write(one.subarray(10, 200));
  await new Promise((r) => setTimeout(r, 20));
  socket.write(Buffer.concat([one.subarray(200), wire('z9hG4bKs2'), wire('z9hG4bKs3')]));
  const got = [await b.next(), await b.next(), await b.next()];
  t.same(got.map((g) => g.message.topVia.branch), ['z9hG4bKs1', 'z9hG4bKs2', 'z9hG4bKs3']);
  t.ok(got.every((g) => g.message.body.toString() === 'hello'));
  const pong = new Promise<Buffer>((resolve) => socket.once('data', resolve));
  socket.write('\r\n\r\n');
  t.equal((await pong).toString(), '\r\n', 'RFC 5626 4.4.1: double CRLF answered with CRLF');
});

t.test('maximum message size: UDP datagram dropped; TCP answered 513 then closed', async (t) => {
  const b = await startLayer(t, [{ protocol: 'UDP', host: '127.0.0.1', port: 0 }, { protocol: 'TCP', host: '127.0.0.1', port: 0 }], { maxMessageSize: 1000 });
  const big = options('UDP', '127.0.0.1', 5060, 'z9hG4bKbig');
  big.headers.append('X-Padding', 'x'.repeat(1200));
  const raw = Buffer.from(`OPTIONS sip:b@127.0.0.1 SIP/2.0\r\n${[...big.headers.entries()].map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\nContent-Length: 0\r\n\r\n`);
  const udp = createSocket('udp4');
  t.teardown(() => udp.close());
  udp.send(raw, b.layer.listeningPoint('UDP')!.port, '127.0.0.1');
  while (b.dropped.length === 0) await new Promise((r) => setTimeout(r, 5));
  t.same(b.dropped, ['oversize']);
  const socket = connect({ host: '127.0.0.1', port: b.layer.listeningPoint('TCP')!.port });
  t.teardown(() => socket.destroy());
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  const closed = new Promise((resolve) => socket.once('end', resolve));
  socket.write(raw);
  await closed;
  const answer = parseMessage(Buffer.concat(chunks));
  t.ok(answer.ok && answer.message.kind === 'response' && answer.message.status === 513, '513 Message Too Large');
});

t.test('RFC 3261 8.2 / RFC 4475 3.1.2.3: a malformed UDP request gets a 400 to its source', async (t) => {
  const b = await startLayer(t, [{ protocol: 'UDP', host: '127.0.0.1', port: 0 }]);
  const udp = createSocket('udp4');
  t.teardown(() => udp.close());
  const answer = new Promise<Buffer>((resolve) => udp.once('message', resolve));
  const raw = 'OPTIONS sip:b@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:9;branch=z9hG4bKm\r\nFrom: <sip:a@x>;tag=1\r\nTo: <sip:b@x>\r\nCall-ID: m1\r\nCSeq: 1 OPTIONS\r\nContent-Length: -5\r\n\r\n';
  udp.send(raw, b.layer.listeningPoint('UDP')!.port, '127.0.0.1');
  const parsed = parseMessage(await answer);
  t.ok(parsed.ok && parsed.message.kind === 'response' && parsed.message.status === 400);
  t.same(b.malformed, [400]);
  t.equal(b.inbox.length, 0, 'nothing malformed reaches the layer above');
});

t.test('RFC 3261 18.1.1 and 21.4.1: a malformed request that fills a datagram still gets its 400, with the quoted detail cut short', async (t) => {
  const b = await startLayer(t, [{ protocol: 'UDP', host: '127.0.0.1', port: 0 }]);
  const udp = createSocket('udp4');
  t.teardown(() => udp.close());
  const answer = new Promise<Buffer>((resolve) => {
    udp.once('message', resolve);
    setTimeout(() => resolve(Buffer.from('no answer')), 5000).unref();
  });
  // The parse error quotes the 40,000-octet From tail, which the 400 also copies (RFC 3261 8.2.6.2):
  // with the detail echoed whole the answer would exceed a datagram's 65,507 octets.
  const raw = `OPTIONS sip:b@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:9;branch=z9hG4bKm\r\nFrom: <sip:a@x>${'>'.repeat(40_000)}\r\nTo: <sip:b@x>\r\nCall-ID: m2\r\nCSeq: 1 OPTIONS\r\n\r\n`;
  udp.send(raw, b.layer.listeningPoint('UDP')!.port, '127.0.0.1');
  const statusLine = (await answer).toString('latin1').split('\r\n')[0]!;
  t.match(statusLine, /^SIP\/2\.0 400 Bad Request \(/, '400 Bad Request');
  t.ok(statusLine.length < 200, 'the reason phrase is bounded');
});

t.test('per-source rate limit: a token bucket drops what exceeds the burst', async (t) => {
  const clock = new FakeClock();
  const b = await startLayer(t, [{ protocol: 'UDP', host: '127.0.0.1', port: 0 }], { rateLimit: { perSecond: 1, burst: 2 }, clock });
  const a = await startLayer(t, [{ protocol: 'UDP', host: '127.0.0.1', port: 0 }]);
  const port = b.layer.listeningPoint('UDP')!.port;
  for (let i = 0; i < 5; i++) await a.layer.send(options('UDP', '127.0.0.1', 5060, `z9hG4bKrl${i}`), { protocol: 'UDP', address: '127.0.0.1', port });
  while (b.inbox.length + b.dropped.length < 5) await new Promise((r) => setTimeout(r, 5));
  t.equal(b.inbox.length, 2);
  t.same(b.dropped, ['rate-limit', 'rate-limit', 'rate-limit']);
  clock.advance(1000);
  await a.layer.send(options('UDP', '127.0.0.1', 5060, 'z9hG4bKrl9'), { protocol: 'UDP', address: '127.0.0.1', port });
  t.equal((await b.next()).message.topVia.branch, 'z9hG4bKrl0');
  t.equal((await b.next()).message.topVia.branch, 'z9hG4bKrl1');
  t.equal((await b.next()).message.topVia.branch, 'z9hG4bKrl9', 'a token refilled after one second');
});

t.test('TCP idle connections close after the idle timeout (injected clock)', async (t) => {
  const clock = new FakeClock();
  const b = await startLayer(t, [{ protocol: 'TCP', host: '127.0.0.1', port: 0 }], { idleTimeoutMs: 30_000, clock });
  const socket = connect({ host: '127.0.0.1', port: b.layer.listeningPoint('TCP')!.port });
  t.teardown(() => socket.destroy());
  const ended = new Promise((resolve) => socket.once('end', resolve));
  await new Promise((resolve) => socket.once('connect', resolve));
  await new Promise((r) => setTimeout(r, 20));
  clock.advance(29_000);
  clock.advance(2_000);
  await ended;
  t.pass('server ended the idle connection');
});

t.test('socket failures become TransportError', async (t) => {
  const a = await startLayer(t, [{ protocol: 'TCP', host: '127.0.0.1', port: 0 }]);
  const probe = await startLayer(t, [{ protocol: 'TCP', host: '127.0.0.1', port: 0 }]);
  const port = probe.layer.listeningPoint('TCP')!.port;
  await probe.layer.stop();
  const err = await a.layer.send(options('TCP', '127.0.0.1', 1, 'z9hG4bKe'), { protocol: 'TCP', address: '127.0.0.1', port }).then(() => undefined, (e: unknown) => e);
  t.type(err, TransportError);
  t.equal((err as TransportError).code, 'ECONNREFUSED');
  await t.rejects(a.layer.send(options('UDP', '127.0.0.1', 1, 'z9hG4bKf'), { protocol: 'UDP', address: '127.0.0.1', port: 9 }), TransportError, 'no UDP listening point');
  const busy = new TransportLayer({ listen: [{ protocol: 'TCP', host: '127.0.0.1', port: a.layer.listeningPoint('TCP')!.port }], delegate: { onMessage: () => undefined } });
  await t.rejects(busy.start(), TransportError, 'EADDRINUSE is a TransportError');
});

t.test('RFC 3261 18.3 / 8.2: a malformed but framed TCP request gets 400 on its connection, which stays usable', async (t) => {
  const b = await startLayer(t, [{ protocol: 'TCP', host: '127.0.0.1', port: 0 }]);
  const socket = connect({ host: '127.0.0.1', port: b.layer.listeningPoint('TCP')!.port });
  t.teardown(() => socket.destroy());
  await new Promise((resolve) => socket.once('connect', resolve));
  const reply = new Promise<Buffer>((resolve) => socket.once('data', resolve));
  // RFC 4475 3.1.2.17: CSeq method does not match the request method.
  socket.write('OPTIONS sip:b@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/TCP 127.0.0.1:9;branch=z9hG4bKt\r\nFrom: <sip:a@x>;tag=1\r\nTo: <sip:b@x>\r\nCall-ID: t1\r\nCSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n');
  const answer = parseMessage(await reply, { stream: true });
  t.ok(answer.ok && answer.message.kind === 'response' && answer.message.status === 400);
  const good = options('TCP', '127.0.0.1', 9, 'z9hG4bKgood');
  socket.write(`OPTIONS sip:b@127.0.0.1 SIP/2.0\r\n${[...good.headers.entries()].map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\nContent-Length: 0\r\n\r\n`);
  t.equal((await b.next()).message.topVia.branch, 'z9hG4bKgood', 'the next message on the connection is delivered');
});

t.test('RFC 3261 18.1.1: with the size limit set, a large UDP request goes over TCP with its top Via rewritten', async (t) => {
  const b = await startLayer(t, [{ protocol: 'UDP', host: '127.0.0.1', port: 0 }, { protocol: 'TCP', host: '127.0.0.1', port: 0 }]);
  const a = await startLayer(t, [{ protocol: 'UDP', host: '127.0.0.1', port: 0 }, { protocol: 'TCP', host: '127.0.0.1', port: 0 }], { udpSizeLimitForTcp: 1300 });
  const bUdp = b.layer.listeningPoint('UDP')!.port;
  const bTcp = b.layer.listeningPoint('TCP')!.port;
  const small = options('UDP', '127.0.0.1', a.layer.listeningPoint('UDP')!.port, 'z9hG4bKsmall');
  await a.layer.send(small, { protocol: 'UDP', address: '127.0.0.1', port: bUdp });
  t.equal((await b.next()).source.protocol, 'UDP', 'small requests stay on UDP');
  const large = options('UDP', '127.0.0.1', a.layer.listeningPoint('UDP')!.port, 'z9hG4bKlarge');
  large.body = Buffer.alloc(1400, 0x61);
  large.headers.set('Content-Type', 'text/plain');
  // Real peers listen on one port number for both (5060); here the ports differ, so the target names the TCP one.
  await a.layer.send(large, { protocol: 'UDP', address: '127.0.0.1', port: bTcp });
  const got = await b.next();
  t.equal(got.source.protocol, 'TCP');
  t.equal(got.message.topVia.protocol, 'TCP');
  t.equal(got.message.topVia.branch, 'z9hG4bKlarge', 'same branch, same transaction');
  t.equal(got.message.topVia.port, a.layer.listeningPoint('TCP')!.port, 'sent-by port is the TCP listening port');
  t.equal(large.topVia.protocol, 'UDP', "the caller's request object is not modified");
});

t.test('invalid targets reject with TransportError instead of throwing', async (t) => {
  const a = await startLayer(t, [{ protocol: 'UDP', host: '127.0.0.1', port: 0 }, { protocol: 'TCP', host: '127.0.0.1', port: 0 }]);
  const req = options('UDP', '127.0.0.1', 1, 'z9hG4bKinv');
  await t.rejects(a.layer.send(req, { protocol: 'UDP', address: '127.0.0.1', port: 70000 }), TransportError);
  await t.rejects(a.layer.send(req, { protocol: 'TCP', address: '127.0.0.1', port: -1 }), TransportError);
});
