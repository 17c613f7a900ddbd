/**
 * @module Caps on inbound SIP TCP/TLS connections and their time-outs, over real sockets on
 * loopback (127.0.0.2 to 127.0.0.5 as sources): per-source and overall caps with refusals reset
 * at once and reported, trusted sources outside the overall cap, and RFC 5626 keep-alives that
 * can no longer hold a connection open (docs/RELIABILITY.md, "Descriptor budget").
 */
import t, { type Test } from 'tap';
import { connect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { testPki } from '../../../../test/support/https-fixture.js';
import { needPeer } from '../../../../test/support/peers.js';
import type { ConnectionRefusal } from './connection-limiter.js';
import { TransportLayer, type ListenOptions, type TransportLayerOptions } from './transport-layer.js';
import type { TransportProtocol } from './transport.js';

interface Layer {
  layer: TransportLayer;
  port: number;
  /** Call-IDs of the requests delivered, in order. */
  received: string[];
  refused: { reason: ConnectionRefusal; address: string }[];
}

async function startLayer(t: Test, extra: Partial<TransportLayerOptions>, listen: ListenOptions = { protocol: 'TCP', host: '127.0.0.1', port: 0 }): Promise<Layer> {
  const received: string[] = [];
  const refused: Layer['refused'] = [];
  const layer = new TransportLayer({
    listen: [listen],
    delegate: {
      onMessage: (message) => received.push(message.callId),
      onConnectionRefused: (reason, source) => refused.push({ reason, address: source.address }),
    },
    ...extra,
  });
  await layer.start();
  t.teardown(() => layer.stop());
  return { layer, port: layer.listeningPoint(listen.protocol)!.port, received, refused };
}

function options(callId: string, protocol: TransportProtocol = 'TCP'): string {
  return [`OPTIONS sip:gw@127.0.0.1 SIP/2.0`, `Via: SIP/2.0/${protocol} 127.0.0.9:5060;branch=z9hG4bK${callId}`, 'Max-Forwards: 70',
    'From: <sip:peer@127.0.0.9>;tag=1', 'To: <sip:gw@127.0.0.1>', `Call-ID: ${callId}`, 'CSeq: 1 OPTIONS', 'Content-Length: 0', '', ''].join('\r\n');
}

/** A TCP connection from `from`, with promises for its close and the octets it received. */
async function dial(t: Test, from: string, port: number): Promise<{ socket: Socket; closed: Promise<void>; isClosed(): boolean; data(): string }> {
  const socket = connect({ host: '127.0.0.1', port, localAddress: from });
  t.teardown(() => socket.destroy());
  let data = '';
  let closed = false;
  socket.on('data', (d: Buffer) => { data += d.toString('latin1'); });
  socket.on('error', () => undefined);
  const done = new Promise<void>((resolve) => socket.once('close', () => { closed = true; resolve(); }));
  await new Promise<void>((resolve) => { socket.once('connect', resolve); socket.once('close', resolve); });
  return { socket, closed: done, isClosed: () => closed, data: () => data };
}

async function until(what: string, check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const LIMITS = { maxConnections: 100, maxPerSource: 2 };

t.test('per-source cap: a third TCP connection from 127.0.0.2 is reset at once and reported; 127.0.0.3 still connects and is heard', async (t) => {
  const l = await startLayer(t, { connectionLimits: LIMITS });
  const a = await dial(t, '127.0.0.2', l.port);
  const b = await dial(t, '127.0.0.2', l.port);
  await until('two connections counted', () => l.layer.inboundConnections === 2);
  const third = await dial(t, '127.0.0.2', l.port);
  await third.closed;
  t.same(l.refused, [{ reason: 'max-connections-per-source', address: '127.0.0.2' }], 'the refusal is reported with its reason');
  t.equal(l.layer.inboundConnections, 2, 'the refused socket took no slot');
  const other = await dial(t, '127.0.0.3', l.port);
  other.socket.write(options('from-3'));
  await until('the request from 127.0.0.3', () => l.received.includes('from-3'));
  t.notOk(a.isClosed() || b.isClosed() || other.isClosed(), 'admitted connections stay open');
  a.socket.destroy();
  await until('the slot given back', () => l.layer.inboundConnections === 2);
  const again = await dial(t, '127.0.0.2', l.port);
  again.socket.write(options('again-2'));
  await until('a new connection from 127.0.0.2 once one closed', () => l.received.includes('again-2'));
});

t.test('overall cap: ordinary sources share max_connections; a trusted source (carrier) has its own cap outside it', async (t) => {
  const l = await startLayer(t, {
    connectionLimits: { maxConnections: 2, maxPerSource: 10, maxPerTrustedSource: 3, isTrustedSource: (a) => a === '127.0.0.5' },
  });
  await dial(t, '127.0.0.2', l.port);
  await dial(t, '127.0.0.3', l.port);
  await until('two counted', () => l.layer.inboundConnections === 2);
  const over = await dial(t, '127.0.0.4', l.port);
  await over.closed;
  t.same(l.refused, [{ reason: 'max-connections', address: '127.0.0.4' }]);
  const carrier = [await dial(t, '127.0.0.5', l.port), await dial(t, '127.0.0.5', l.port), await dial(t, '127.0.0.5', l.port)];
  carrier[2]!.socket.write(options('carrier-3'));
  await until('the trusted source heard past the overall cap', () => l.received.includes('carrier-3'));
  const fourth = await dial(t, '127.0.0.5', l.port);
  await fourth.closed;
  t.same(l.refused.at(-1), { reason: 'max-connections-per-source', address: '127.0.0.5' }, 'its own cap still holds');
  t.equal(l.layer.inboundConnections, 5);
});

t.test('RFC 5626 4.4.1: a connection that only sends CRLF keep-alives is answered, then closed after the first-message time-out', async (t) => {
  const l = await startLayer(t, { firstMessageTimeoutMs: 600, idleTimeoutMs: 60_000 });
  const pinger = await dial(t, '127.0.0.2', l.port);
  const pings = setInterval(() => { if (!pinger.isClosed()) pinger.socket.write('\r\n\r\n'); }, 100);
  t.teardown(() => clearInterval(pings));
  const talker = await dial(t, '127.0.0.3', l.port);
  talker.socket.write(options('talker-1'));
  await until('pinger closed by the gateway', () => pinger.isClosed(), 20_000);
  t.match(pinger.data(), /^(\r\n)+$/, 'its pings were answered with CRLF pongs until then');
  t.notOk(talker.isClosed(), 'a connection that sent a request is not subject to the first-message time-out');
});

t.test('RFC 5626 4.4.1: keep-alives after a request do not reset the idle time-out; SIP messages do', async (t) => {
  // The idle time-out is many times the pace of the traffic, so a stall of the shared host cannot close the talker.
  const l = await startLayer(t, { firstMessageTimeoutMs: 60_000, idleTimeoutMs: 2000 });
  const pinger = await dial(t, '127.0.0.2', l.port);
  const talker = await dial(t, '127.0.0.3', l.port);
  pinger.socket.write(options('pinger-1'));
  let n = 0;
  const traffic = setInterval(() => {
    if (!pinger.isClosed()) pinger.socket.write('\r\n\r\n');
    if (!talker.isClosed()) talker.socket.write(options(`talker-${++n}`));
  }, 100);
  t.teardown(() => clearInterval(traffic));
  await until('pinger closed by the gateway', () => pinger.isClosed(), 20_000);
  t.ok(l.received.includes('pinger-1'), 'its one request was delivered');
  t.notOk(talker.isClosed(), 'the connection sending requests at the same pace is still open');
});

t.test('TLS: the per-source cap applies before the handshake', async (t) => {
  if (!needPeer(t, 'openssl')) return;
  const pki = testPki();
  const l = await startLayer(t, { connectionLimits: { maxConnections: 100, maxPerSource: 1 } }, { protocol: 'TLS', host: '127.0.0.1', port: 0, tls: { cert: pki.cert, key: pki.key } });
  const tlsFrom = (from: string): Promise<{ secure: boolean }> => new Promise((resolve) => {
    const raw = connect({ host: '127.0.0.1', port: l.port, localAddress: from });
    const s = tlsConnect({ socket: raw, ca: pki.ca, servername: 'recordings.test' }, () => {
      s.write(options(`tls-${from}`, 'TLS'));
      resolve({ secure: true });
    });
    t.teardown(() => { s.destroy(); raw.destroy(); });
    s.on('error', () => resolve({ secure: false }));
  });
  t.same(await tlsFrom('127.0.0.2'), { secure: true });
  t.same(await tlsFrom('127.0.0.2'), { secure: false }, 'the second connection from the same source never gets a handshake');
  t.same(l.refused, [{ reason: 'max-connections-per-source', address: '127.0.0.2' }]);
  t.same(await tlsFrom('127.0.0.3'), { secure: true });
  await until('both admitted requests delivered', () => l.received.includes('tls-127.0.0.2') && l.received.includes('tls-127.0.0.3'));
});
