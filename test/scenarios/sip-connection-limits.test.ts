/**
 * @module The running gateway's caps on inbound SIP TCP connections (docs/RELIABILITY.md,
 * "Descriptor budget"), over real sockets on loopback: `sip.tcp.max_connections_per_source` for
 * ordinary addresses, the higher `max_connections_per_carrier_source` for a carrier's, refusals
 * counted in `vgw_sip_connections_refused_total`.
 */
import t from 'tap';
import { connect, type Socket } from 'node:net';
import { startTestGateway, waitFor } from '../support/gateway-harness.js';

const CARRIERS = "carriers:\n  - name: trunk\n    inbound:\n      sources: ['127.0.0.5']\n";
const YAML = 'sip:\n  tcp:\n    max_connections_per_source: 2\n    max_connections_per_carrier_source: 3';

function options(callId: string): string {
  return ['OPTIONS sip:gateway@127.0.0.1 SIP/2.0', `Via: SIP/2.0/TCP 127.0.0.9:5060;branch=z9hG4bK${callId}`, 'Max-Forwards: 70',
    'From: <sip:peer@127.0.0.9>;tag=1', 'To: <sip:gateway@127.0.0.1>', `Call-ID: ${callId}`, 'CSeq: 1 OPTIONS', 'Content-Length: 0', '', ''].join('\r\n');
}

interface Peer { socket: Socket; closed(): boolean; answered(): boolean }

/** A TCP connection from `from` that sends one OPTIONS; it notes the 200 and the close. */
async function peer(t: { teardown(fn: () => void): void }, from: string, port: number): Promise<Peer> {
  const socket = connect({ host: '127.0.0.1', port, localAddress: from });
  t.teardown(() => socket.destroy());
  let closed = false, answered = false;
  socket.on('data', (d: Buffer) => { if (d.toString('latin1').startsWith('SIP/2.0 200')) answered = true; });
  socket.on('error', () => undefined);
  socket.on('close', () => { closed = true; });
  await new Promise<void>((resolve) => { socket.once('connect', resolve); socket.once('close', resolve); });
  if (!closed) socket.write(options(`${from}-${socket.localPort ?? 0}`));
  return { socket, closed: () => closed, answered: () => answered };
}

t.test('sip.tcp caps: a third connection from an ordinary address is reset and counted; a carrier address has its higher cap', async (t) => {
  const gw = await startTestGateway(t, { carriers: CARRIERS, yaml: YAML, logLevel: 'info' });
  const port = gw.gateway.sip.tcpPort;
  const metric = async (pattern: RegExp): Promise<number | undefined> => {
    const m = pattern.exec(await (await fetch(`${gw.base}/metrics`)).text());
    return m ? Number(m[1]) : undefined;
  };
  const first = [await peer(t, '127.0.0.2', port), await peer(t, '127.0.0.2', port)];
  await waitFor('both answered', () => first.every((p) => p.answered()));
  const third = await peer(t, '127.0.0.2', port);
  await waitFor('the third reset', () => third.closed());
  t.notOk(third.answered(), 'the refused connection was never read');
  const other = await peer(t, '127.0.0.3', port);
  const carrier = [await peer(t, '127.0.0.5', port), await peer(t, '127.0.0.5', port), await peer(t, '127.0.0.5', port)];
  await waitFor('another address and the carrier answered', () => [other, ...carrier].every((p) => p.answered()));
  t.ok(first.every((p) => !p.closed()), 'the first two stay open');
  t.equal(await metric(/^vgw_sip_connections_refused_total\{reason="max-connections-per-source"\} (\d+)/m), 1, 'one refusal counted');
  t.equal(await metric(/^vgw_sip_connections_inbound (\d+)/m), 6, 'two, one and three connections open');
});

t.test('descriptor budget: caps above the open-file soft limit are named in a warning at start (Linux: /proc/self/limits)', async (t) => {
  const gw = await startTestGateway(t, { yaml: 'sip:\n  tcp:\n    max_connections: 100000000', logLevel: 'info' });
  const warning = gw.logs.find((l) => typeof l.msg === 'string' && l.msg.includes('exceed the open-file limit'));
  t.ok(warning, 'warned');
  t.equal(warning?.sipConnections, 100_000_000);
  t.ok(Number(warning?.softLimit) > 0 && Number(warning?.leftForCalls) < 0, 'with the soft limit and the shortfall');
});
