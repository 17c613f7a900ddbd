/**
 * @module A headless baresip for media interop: its own config folder (`-f DIR`), G.711 only, a
 * WAV file played as its microphone (aufile; baresip hangs up when the file ends), everything it
 * hears dumped to a WAV (sndfile), one account on 127.0.0.1, JSON commands over ctrl_tcp, and the
 * process stopped by pid.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { buildWavHeader } from '../../src/engine/media/recording/wav-header.js';
import { freePort } from './sip-sipp.js';

interface Teardown {
  teardown(fn: () => void | Promise<void>): void;
}

/** How to start one baresip. */
export interface BaresipPeerOptions {
  /** Its own config folder (written here); the recording lands in it too. */
  dir: string;
  sipPort: number;
  ctrlPort: number;
  /** An 8 kHz mono 16-bit WAV played as the microphone. */
  sourceWav: string;
  /** The user part of its account, e.g. `alice`. */
  user: string;
  /** Auto-answer incoming calls. */
  autoAnswer: boolean;
  /** RTP port range, e.g. `31000-31099`; distinct per peer so two baresips never race for one. */
  rtpPorts: string;
  /** `srtp-mand`: SRTP with SDES keys (RFC 4568) in RTP/SAVP, required both ways (baresip's srtp module). */
  mediaenc?: 'srtp-mand';
  /** A PEM holding a certificate and its key: baresip then serves SIP over TLS on `sipPort` + 1. */
  tlsCertificate?: string;
}

/** A running baresip. */
export interface BaresipPeer {
  child: ChildProcess;
  /**
   * The WAV of what baresip heard (sndfile's decoder-side dump, complete once the call has
   * ended); throws listing the folder when there is none.
   */
  recording(): string;
  output(): string;
  /** Sends a ctrl_tcp command (`dial`, `hangup`, `quit`) as a netstring-framed JSON object. */
  command(command: string, params?: string): Promise<void>;
  /** Resolves when the output matches `pattern`; rejects after `ms` (a hang guard). */
  waitFor(pattern: RegExp, ms?: number): Promise<void>;
  /** Asks baresip to quit, then kills it by pid if it has not exited within `ms`. */
  stop(ms?: number): Promise<void>;
}

/** Ports handed out by {@link baresipPorts} in this process, so two peers never pick overlapping ones. */
const handedOut = new Set<number>();

function tcpFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/**
 * A SIP and a ctrl_tcp port for one baresip. baresip 1.0 binds UDP and TCP on `sip_listen`'s port
 * and TLS on the next one (it has no switch to leave TLS out), so the SIP port is only taken when
 * port + 1 is free for TCP as well; ports already handed to another peer of this process are
 * skipped, since freshly picked ephemeral ports are often neighbours.
 */
async function baresipPorts(): Promise<{ sipPort: number; ctrlPort: number }> {
  const pick = async (test: (p: number) => Promise<boolean>): Promise<number> => {
    for (;;) {
      const p = await freePort();
      if (handedOut.has(p) || handedOut.has(p + 1) || !(await test(p))) continue;
      handedOut.add(p);
      return p;
    }
  };
  const sipPort = await pick((p) => tcpFree(p + 1));
  handedOut.add(sipPort + 1);
  const ctrlPort = await pick(() => Promise.resolve(true));
  return { sipPort, ctrlPort };
}

/** A baresip {@link startBaresip} started, with the ports it listens on. */
export type StartedBaresip = BaresipPeer & { sipPort: number; ctrlPort: number };

/** How to start one baresip whose SIP and ctrl_tcp ports {@link startBaresip} picks. */
export type BaresipOptions = Omit<BaresipPeerOptions, 'sipPort' | 'ctrlPort'>;

/** How many times {@link startBaresip} tries fresh ports before giving up. */
const PORT_ATTEMPTS = 5;

/**
 * Starts baresip on free ports and resolves once it is ready. A port found free may be taken by
 * another process before baresip binds it (the suites run side by side, and the ports come from
 * the ephemeral range); baresip then exits with "Address already in use" and is started again on
 * other ports.
 */
export async function startBaresip(t: Teardown, o: BaresipOptions): Promise<StartedBaresip> {
  for (let attempt = 1; ; attempt++) {
    const ports = await baresipPorts();
    const peer = startBaresipPeer(t, { ...o, ...ports });
    try {
      await peer.waitFor(/baresip is ready/);
      return { ...peer, ...ports };
    } catch (err) {
      const raced = peer.child.exitCode !== null && /Address already in use/.test(peer.output());
      if (!raced || attempt === PORT_ATTEMPTS) throw err;
    }
  }
}

/** Starts baresip with the config written from `o`; the teardown kills it by pid if still running. */
function startBaresipPeer(t: Teardown, o: BaresipPeerOptions): BaresipPeer {
  writeFileSync(join(o.dir, 'config'), [
    'poll_method epoll',
    `sip_listen 127.0.0.1:${o.sipPort}`,
    `audio_source aufile,${o.sourceWav}`,
    'module_path /usr/lib/baresip/modules',
    // aufile is only a source in baresip 1.0; the sndfile filter dumps both directions to WAVs.
    'module g711.so', 'module aufile.so', 'module sndfile.so',
    ...(o.mediaenc ? ['module srtp.so'] : []),
    ...(o.tlsCertificate ? [`sip_certificate ${o.tlsCertificate}`] : []),
    `snd_path ${o.dir}`,
    'module_app account.so', 'module_app menu.so', 'module_app ctrl_tcp.so',
    `ctrl_tcp_listen 127.0.0.1:${o.ctrlPort}`,
    `rtp_ports ${o.rtpPorts}`,
    '',
  ].join('\n'));
  // G.711 only (PCMU first), so both calls use the codec our bridge relays without resampling.
  const answer = o.autoAnswer ? ';answermode=auto' : '';
  const mediaenc = o.mediaenc ? `;mediaenc=${o.mediaenc}` : '';
  writeFileSync(join(o.dir, 'accounts'), `<sip:${o.user}@127.0.0.1>;regint=0;audio_codecs=PCMU,PCMA${answer}${mediaenc}\n`);
  const child = spawn('baresip', ['-f', o.dir, '-4'], { cwd: o.dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const waiters: { pattern: RegExp; resolve: () => void; reject: (err: Error) => void }[] = [];
  const onData = (d: Buffer): void => {
    out += d.toString();
    for (const w of [...waiters]) {
      if (w.pattern.test(out)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const running = (): boolean => child.exitCode === null && child.signalCode === null;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Once its output has ended nothing more can match: a waiter fails now rather than at its timeout.
  let closed = false;
  const exitedBefore = (pattern: RegExp): Error => new Error(`baresip ${o.user} exited before printing ${String(pattern)}:\n${out.slice(-1500)}`);
  child.once('close', () => {
    closed = true;
    for (const w of waiters.splice(0)) w.reject(exitedBefore(w.pattern));
  });
  t.teardown(() => {
    if (running()) child.kill('SIGKILL');
  });
  const command = (name: string, params?: string): Promise<void> => new Promise<void>((resolve, reject) => {
    const json = JSON.stringify({ command: name, ...(params !== undefined ? { params } : {}), token: 't' });
    const s = connect(o.ctrlPort, '127.0.0.1', () => s.end(`${Buffer.byteLength(json)}:${json},`));
    s.on('error', reject);
    s.on('close', () => resolve());
    setTimeout(() => s.destroy(), 1000);
  });
  return {
    child,
    recording: () => {
      const files = readdirSync(o.dir);
      const heard = files.find((f) => /^dump-.*dec\.wav$/.test(f));
      if (heard === undefined) throw new Error(`baresip ${o.user} wrote no decoder dump; its folder holds ${files.join(', ')}`);
      return join(o.dir, heard);
    },
    output: () => out,
    command,
    waitFor: (pattern, ms = 10_000) => new Promise<void>((resolve, reject) => {
      if (pattern.test(out)) return resolve();
      if (closed) return reject(exitedBefore(pattern));
      const timer = setTimeout(() => reject(new Error(`baresip ${o.user} did not print ${String(pattern)}:\n${out.slice(-1500)}`)), ms);
      waiters.push({ pattern, resolve: () => { clearTimeout(timer); resolve(); }, reject: (err) => { clearTimeout(timer); reject(err); } });
    }),
    stop: async (ms = 3000) => {
      if (!running()) return;
      await command('quit').catch(() => undefined);
      const timer = setTimeout(() => { if (running()) child.kill('SIGKILL'); }, ms);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * A tone as an 8 kHz mono 16-bit WAV, for a peer whose words do not matter. Make it longer than
 * the call: baresip hangs up when its microphone file ends.
 */
export function toneWav(seconds: number, hz = 440): Buffer {
  const rate = 8000;
  const pcm = Buffer.alloc(rate * seconds * 2);
  for (let i = 0; i < rate * seconds; i++) pcm.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / rate)), i * 2);
  return Buffer.concat([buildWavHeader({ sampleRate: rate, channels: 1 }, pcm.length), pcm]);
}
