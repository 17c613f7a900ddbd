/**
 * @module A throw-away redis-server (Debian `redis-server`) on 127.0.0.1 and a free port, in a
 * temporary folder, with nothing written to disk (`--save "" --appendonly no`): started, waited
 * for until it answers PING, stopped by its pid at teardown. Where the binary is missing the test
 * skips through {@link missingPeer} (a failure under VGW_REQUIRE_INTEROP=1).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createConnection } from 'node:net';
import type { Test } from 'tap';
import { missingPeer, tempWorkdir } from './peers.js';
import { freePort } from './sip-sipp.js';

export interface TestRedis {
  url: string;
  port: number;
  pid: number;
  /** Stops the server now (SIGKILL: an outage, not a shutdown); idempotent. */
  stop(): Promise<void>;
}

function redisServerPath(): string | null {
  try {
    return execFileSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

/** One PING over a raw socket: true when `+PONG` comes back within `ms`. */
function pings(port: number, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    const done = (ok: boolean): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), ms);
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}

/**
 * Starts redis-server for `t`; undefined after {@link missingPeer} (the test is then ended and
 * the caller returns) when the binary is not installed.
 */
export async function startRedis(t: Pick<Test, 'fail' | 'pass' | 'end' | 'teardown'>): Promise<TestRedis | undefined> {
  const binary = redisServerPath();
  if (binary === null) {
    missingPeer(t, 'needs redis-server (apt-get install redis-server)');
    return undefined;
  }
  const dir = tempWorkdir(t, 'vgw-redis-');
  const port = await freePort();
  const child: ChildProcess = spawn(binary, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
    cwd: dir, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout?.on('data', (chunk: Buffer) => (log = (log + chunk.toString()).slice(-4000)));
  child.stderr?.on('data', (chunk: Buffer) => (log = (log + chunk.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let running = true;
  void exited.then(() => (running = false));
  const stop = async (): Promise<void> => {
    if (!running || child.pid === undefined) return;
    process.kill(child.pid, 'SIGKILL');
    await exited;
  };
  t.teardown(stop);
  const deadline = Date.now() + 5000;
  while (!(await pings(port, 200))) {
    if (!running || Date.now() > deadline) {
      await stop();
      throw new Error(`redis-server did not start on port ${port}: ${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { url: `redis://127.0.0.1:${port}`, port, pid: child.pid!, stop };
}
