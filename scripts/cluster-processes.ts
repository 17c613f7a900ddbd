/**
 * @module The processes `npm run cluster` starts (docs/CLUSTER.md "Try it: npm run cluster"): each
 * one spawned in its own process group (so the terminal's Ctrl-C reaches only the script, which
 * then stops them in reverse order), its output kept in a log file in its run folder, and stopped
 * by its pid.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** A clear failure of the cluster's start, printed without a stack. */
export class ClusterStartError extends Error {
  override readonly name = 'ClusterStartError';
}

const STOP_TIMEOUT_MS = 20_000;

/** One process the script started and owns. */
export interface Supervised {
  name: string;
  pid: number;
  /** Its log so far (stdout and stderr), for failure messages. */
  log(): string;
  /** True until it exited. */
  running(): boolean;
  /** SIGTERM, then SIGKILL after a grace period; resolves once it exited. */
  stop(): Promise<void>;
}

/** Spawns `command` with its output appended to `logFile`; refuses if it exits before it is ready. */
export interface StartOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  logFile: string;
  /** The signal that asks it to stop (SIGTERM unless given). */
  stopSignal?: NodeJS.Signals;
  /** Runs as this user (PostgreSQL refuses root). */
  uid?: number;
  gid?: number;
  /** Where the process is recorded as soon as it is spawned, so a stop during the start finds it. */
  owned: Supervised[];
}

export function startProcess(name: string, command: string, args: readonly string[], options: StartOptions): Supervised {
  const fd = openSync(options.logFile, 'a');
  let child: ChildProcess;
  try {
    // detached: a process group of its own, so a Ctrl-C in the terminal does not stop it before its turn.
    child = spawn(command, args, {
      cwd: options.cwd, env: options.env, stdio: ['ignore', fd, fd], detached: true,
      ...(options.uid === undefined ? {} : { uid: options.uid, gid: options.gid }),
    });
  } finally {
    closeSync(fd);
  }
  if (child.pid === undefined) throw new ClusterStartError(`${name}: could not start ${command}`);
  const exited = once(child, 'exit').then(() => undefined);
  const running = (): boolean => child.exitCode === null && child.signalCode === null;
  const supervised: Supervised = {
    name,
    pid: child.pid,
    log: () => readFileSync(options.logFile, 'utf8'),
    running,
    async stop() {
      if (!running()) return;
      child.kill(options.stopSignal ?? 'SIGTERM');
      const timer = setTimeout(() => { if (running()) child.kill('SIGKILL'); }, STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    },
  };
  options.owned.push(supervised);
  return supervised;
}

/** The last lines of a log, for a failure message. */
export function tail(text: string, lines = 30): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

/** Polls `probe` every 250 ms until it is true; fails naming `what` (and the process's log) after `ms`. */
export async function waitUntil(what: string, probe: () => Promise<boolean>, ms: number, process?: Supervised): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (process && !process.running()) throw new ClusterStartError(`${process.name} exited while starting:\n${tail(process.log())}`);
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) throw new ClusterStartError(`${what}: not ready after ${ms / 1000} s${process ? `:\n${tail(process.log())}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** True when GET `url` answers 200. */
export async function answers200(url: string): Promise<boolean> {
  const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
  await res.arrayBuffer();
  return res.status === 200;
}

/** True when both TCP and UDP `port` are free on `host`. */
async function isFree(host: string, port: number): Promise<boolean> {
  const tcp = await new Promise<boolean>((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
  if (!tcp) return false;
  return new Promise<boolean>((resolve) => {
    const socket = createSocket('udp4');
    socket.once('error', () => resolve(false));
    socket.bind(port, host, () => socket.close(() => resolve(true)));
  });
}

/** `preferred` on `host` when it is free (TCP and UDP), otherwise a free port the system picks. */
export async function portOn(host: string, preferred = 0): Promise<number> {
  if (preferred !== 0 && await isFree(host, preferred)) return preferred;
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(0, host, () => {
        const address = server.address();
        server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
      });
    });
    if (await isFree(host, port)) return port;
  }
}

/** True when a SIP OPTIONS sent over UDP to `host:port` is answered 200 (RFC 3261 §11). */
export async function answersOptions(host: string, port: number): Promise<boolean> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const local = socket.address().port;
  const tag = `${Date.now()}${Math.floor(Math.random() * 1e6)}`;
  const request = [
    `OPTIONS sip:${host}:${port} SIP/2.0`, `Via: SIP/2.0/UDP 127.0.0.1:${local};branch=z9hG4bK-cluster${tag}`,
    'Max-Forwards: 70', `From: <sip:cluster@127.0.0.1>;tag=${tag}`, `To: <sip:${host}:${port}>`,
    `Call-ID: cluster-${tag}`, 'CSeq: 1 OPTIONS', 'Content-Length: 0', '', '',
  ].join('\r\n');
  try {
    return await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 500);
      socket.on('message', (message) => {
        const text = message.toString();
        if (!text.startsWith('SIP/2.0 1')) { // a provisional reply is not the answer
          clearTimeout(timer);
          resolve(text.startsWith('SIP/2.0 200'));
        }
      });
      socket.send(request, port, host);
    });
  } finally {
    socket.close();
  }
}
