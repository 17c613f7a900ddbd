/**
 * @module Running sipp against the gateway's SIP stack in interop tests and the benchmark: a free
 * port, a sipp child process in a temporary folder (stopped by pid at teardown), and a gateway UA
 * on the product's transport layer.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { SipUserAgent, type SipUserAgentOptions } from '../../src/engine/sip/index.js';
import { TestTransport } from './sip-test-transport.js';
import { TransportLayer } from '../../src/engine/sip/transport/transport-layer.js';
import { withDeadline } from './deadline.js';

/** The folder holding the custom sipp scenarios. */
export const SCENARIOS = join(import.meta.dirname, '..', 'interop', 'scenarios');

/** A fixed SDP answer/offer for signalling tests (no media flows). */
export const TEST_SDP = Buffer.from('v=0\r\no=gw 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 40000 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\na=sendrecv\r\n');

/** Media ports handed out in this process, never handed out twice. */
const mediaPortsHandedOut = new Set<number>();

async function udpFree(port: number): Promise<boolean> {
  const probe = createSocket('udp4');
  const ok = await new Promise<boolean>((resolve) => {
    probe.once('error', () => resolve(false));
    probe.bind(port, '127.0.0.1', () => resolve(true));
  });
  probe.close();
  return ok;
}

/**
 * An even UDP port with the next three free too, for sipp's `-mp` (it binds an RTP/RTCP pair for
 * audio and the pair above it), not handed out before in this process. Picked at random in
 * 20000-29999: below the kernel's ephemeral range (Linux hands out odd ports for bind(0), so
 * asking for a free port and waiting for an even one never ends), and clear of the gateway
 * harness's RTP ports (30000-39999) and of `testPortPool` (40000 and up).
 */
export async function freeMediaPort(): Promise<number> {
  for (;;) {
    const port = 20000 + 4 * Math.floor(Math.random() * 2500);
    if (mediaPortsHandedOut.has(port)) continue;
    let free = true;
    for (let p = port; free && p < port + 4; p++) free = await udpFree(p);
    if (!free) continue;
    mediaPortsHandedOut.add(port);
    return port;
  }
}

/** A port free for both UDP and TCP on 127.0.0.1 at the time of the call. */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const s = createServer();
      s.once('error', reject);
      s.listen(0, '127.0.0.1', () => {
        const a = s.address();
        s.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
      });
    });
    const udpFree = await new Promise<boolean>((resolve) => {
      const u = createSocket('udp4');
      u.once('error', () => resolve(false));
      u.bind(port, '127.0.0.1', () => u.close(() => resolve(true)));
    });
    if (udpFree) return port;
  }
}

/** Outcome of a sipp run. */
export interface SippResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

interface Teardown {
  teardown(fn: () => void | Promise<void>): void;
}

/** A running sipp: its process and a promise of its exit. */
export interface SippRun {
  child: ChildProcess;
  done: Promise<SippResult>;
}

/**
 * Starts sipp with `args` in `cwd`; the teardown kills it by pid if it is still running. `done`
 * rejects when sipp has not exited after `ms` (a hang guard: scenarios pass sipp's own -timeout).
 */
export function startSipp(t: Teardown, cwd: string, args: readonly string[], ms = 90_000): SippRun {
  const child = spawn('sipp', [...args, '-nostdin'], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => { stdout += d.toString(); });
  child.stderr?.on('data', (d: Buffer) => { stderr += d.toString(); });
  const exited = new Promise<SippResult>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  const done = withDeadline(`sipp ${args.join(' ')} to exit`, exited, ms);
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return { child, done };
}

/** Ports of a gateway's listening points. */
export interface GatewayPorts {
  udpPort: number;
  tcpPort: number;
}

/**
 * A gateway user agent on the product's TransportLayer, listening on UDP and TCP on 127.0.0.1
 * (port 0 each unless given).
 */
export async function startGatewayUa(t: Teardown, options: Partial<SipUserAgentOptions> = {}, port = 0): Promise<{ ua: SipUserAgent; transport: GatewayPorts }> {
  // The layer needs its delegate before the UA exists, and the UA needs the layer.
  const up: { ua?: SipUserAgent } = {};
  const layer = new TransportLayer({
    listen: [{ protocol: 'UDP', host: '127.0.0.1', port }, { protocol: 'TCP', host: '127.0.0.1', port }],
    delegate: { onMessage: (m, s) => up.ua?.receive(m, s) },
  });
  await layer.start();
  const gateway = new SipUserAgent({ transport: layer, userAgent: 'voice-gateway-test', ...options });
  up.ua = gateway;
  t.teardown(async () => {
    gateway.dispose();
    await layer.stop();
  });
  return { ua: gateway, transport: { udpPort: layer.localAddress('UDP').port, tcpPort: layer.localAddress('TCP').port } };
}

/** The same over the minimal test transport (for comparing against the product transport). */
export async function startGatewayUaOnTestTransport(t: Teardown, options: Partial<SipUserAgentOptions> = {}, port = 0): Promise<{ ua: SipUserAgent; transport: TestTransport }> {
  const transport = new TestTransport();
  await transport.listen(port, port);
  const ua = new SipUserAgent({ transport, userAgent: 'voice-gateway-test', ...options });
  transport.onReceive = (m, s) => ua.receive(m, s);
  t.teardown(async () => {
    ua.dispose();
    await transport.close();
  });
  return { ua, transport };
}
