/** @module Per-source SIP flood protection of the running gateway (docs/RELIABILITY.md "SIP: parser fuzzing and an INVITE flood"), over real UDP on loopback. */
import t from 'tap';
import { createSocket, type Socket } from 'node:dgram';
import { startTestGateway, waitFor } from '../support/gateway-harness.js';

function options(branch: string, port: number, to: number): Buffer {
  return Buffer.from([
    `OPTIONS sip:gateway@127.0.0.1:${to} SIP/2.0`, `Via: SIP/2.0/UDP 127.0.0.1:${port};branch=z9hG4bK${branch}`, 'Max-Forwards: 70',
    'From: <sip:scanner@127.0.0.1>;tag=f1', `To: <sip:gateway@127.0.0.1:${to}>`, `Call-ID: ${branch}@flood`, 'CSeq: 1 OPTIONS', 'Content-Length: 0', '', '',
  ].join('\r\n'), 'latin1');
}

async function udpFrom(t: { teardown(fn: () => void): void }, address: string): Promise<{ socket: Socket; port: number; answers: () => number }> {
  const socket = createSocket('udp4');
  t.teardown(() => { socket.close(); });
  await new Promise<void>((resolve) => socket.bind(0, address, resolve));
  let answers = 0;
  socket.on('message', (m) => { if (m.toString('latin1').startsWith('SIP/2.0 200')) answers += 1; });
  return { socket, port: socket.address().port, answers: () => answers };
}

t.test('per-source rate limit: a flood from one address is dropped beyond its burst and counted; another address is still answered', async (t) => {
  const gw = await startTestGateway(t, { yaml: 'sip:\n  rate_limit_per_second: 1\n  rate_limit_burst: 10' });
  const sipPort = gw.gateway.sip.udpPort;
  const flood = await udpFrom(t, '127.0.0.1');
  for (let i = 0; i < 200; i++) flood.socket.send(options(`flood${i}`, flood.port, sipPort), sipPort, '127.0.0.1');
  // Another source (127.0.0.2 is loopback too on Linux) has its own bucket.
  const other = await udpFrom(t, '127.0.0.2');
  other.socket.send(options('other1', other.port, sipPort), sipPort, '127.0.0.1');
  await waitFor('the other source answered', () => other.answers() === 1);
  const dropped = await waitFor('the drops counted', async () => {
    const text = await (await fetch(`${gw.base}/metrics`)).text();
    const m = /^vgw_sip_dropped_total\{reason="rate-limit"\} (\d+)/m.exec(text);
    return m && Number(m[1]) + flood.answers() === 200 ? Number(m[1]) : undefined;
  });
  // The burst of 10, plus at most a few tokens refilled at 1/s while the 200 datagrams arrived.
  t.ok(flood.answers() >= 10 && flood.answers() <= 15, `${flood.answers()} of 200 answered from the flooding address`);
  t.equal(dropped, 200 - flood.answers(), 'every other datagram dropped unread and counted');
});
