/**
 * @module Kamailio (Debian) as a carrier-facing edge proxy on loopback for interop tests: the
 * config in test/interop/kamailio/edge.cfg filled in with its own port and the gateway's address,
 * started in the foreground in a temporary folder and stopped by its pid.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempWorkdir } from './peers.js';
import { freePort } from './sip-sipp.js';

/** The edge's address: its own loopback address, so carriers' addresses stay apart from it. */
export const EDGE_IP = '127.0.0.2';

export interface KamailioEdge {
  ip: string;
  port: number;
  /** Its stderr so far (its log), for failure messages. */
  log(): string;
}

/** Answers an OPTIONS to the edge itself with 200 once it listens; false after `ms`. */
async function answersOptions(port: number, ms: number): Promise<boolean> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const local = socket.address().port;
  const deadline = Date.now() + ms;
  try {
    while (Date.now() < deadline) {
      const options = [
        `OPTIONS sip:${EDGE_IP}:${port} SIP/2.0`, `Via: SIP/2.0/UDP 127.0.0.1:${local};branch=z9hG4bK-probe${Date.now()}`,
        'Max-Forwards: 70', `From: <sip:probe@127.0.0.1>;tag=p${Date.now()}`, `To: <sip:${EDGE_IP}:${port}>`,
        `Call-ID: probe-${Date.now()}`, 'CSeq: 1 OPTIONS', 'Content-Length: 0', '', '',
      ].join('\r\n');
      const answered = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), 200);
        socket.once('message', (m) => {
          clearTimeout(timer);
          resolve(m.toString().startsWith('SIP/2.0 200'));
        });
        socket.send(options, port, EDGE_IP);
      });
      if (answered) return true;
    }
    return false;
  } finally {
    socket.close();
  }
}

/** Starts the edge in front of the gateway at `gateway` (`ip:port`); stopped at teardown by its pid. */
export async function startKamailioEdge(t: { teardown(fn: () => void | Promise<void>): void }, gateway: { ip: string; port: number }): Promise<KamailioEdge> {
  const dir = tempWorkdir(t, 'vgw-kamailio-');
  const port = await freePort();
  const cfg = readFileSync(join(import.meta.dirname, '..', 'interop', 'kamailio', 'edge.cfg'), 'utf8')
    .replaceAll('@EDGE_IP@', EDGE_IP).replaceAll('@EDGE_PORT@', String(port))
    .replaceAll('@GW_IP@', gateway.ip).replaceAll('@GW@', `${gateway.ip}:${gateway.port}`)
    .replaceAll('@RUNDIR@', dir);
  const file = join(dir, 'edge.cfg');
  writeFileSync(file, cfg);
  // -DD: the main process stays in the foreground (its children die with it); -E: log to stderr.
  const child: ChildProcess = spawn('kamailio', ['-f', file, '-DD', '-E', '-Y', dir, '-w', dir, '-m', '32', '-M', '4'], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => { stderr += d.toString(); });
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      process.kill(child.pid, 'SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
      if (child.exitCode === null && child.signalCode === null) process.kill(child.pid, 'SIGKILL');
    }
  });
  if (!(await answersOptions(port, 5000))) throw new Error(`kamailio did not start: ${stderr.slice(-2000)}`);
  return { ip: EDGE_IP, port, log: () => stderr };
}
