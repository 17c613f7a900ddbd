/**
 * @module Running baresip headless as a real SIP peer: a config folder (g711, a generated tone
 * file as the microphone, aufile as the speaker, ctrl_tcp for JSON commands), one auto-answering account, and
 * the process stopped by pid at teardown.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';

interface Teardown {
  teardown(fn: () => void | Promise<void>): void;
}

/** A running baresip. */
export interface Baresip {
  child: ChildProcess;
  sipPort: number;
  /** Everything baresip printed so far. */
  output(): string;
  /** Sends a ctrl_tcp command (`dial`, `hangup`, `accept`...) as a netstring-framed JSON object. */
  command(command: string, params?: string): Promise<void>;
  /** Resolves when the output matches `pattern` (or rejects after `ms`). */
  waitFor(pattern: RegExp, ms?: number): Promise<void>;
}

/** Starts baresip in `dir` listening on `sipPort` (UDP and TCP) with control on `ctrlPort`. */
export function startBaresip(t: Teardown, dir: string, sipPort: number, ctrlPort: number): Baresip {
  writeFileSync(join(dir, 'config'), [
    'poll_method epoll',
    `sip_listen 127.0.0.1:${sipPort}`,
    `audio_player aufile,${join(dir, 'heard.wav')}`,
    `audio_source aufile,${join(dir, 'tone.wav')}`,
    `audio_alert aufile,${join(dir, 'alert.wav')}`,
    'module_path /usr/lib/baresip/modules',
    'module g711.so', 'module aufile.so',
    'module_app account.so', 'module_app menu.so', 'module_app ctrl_tcp.so',
    `ctrl_tcp_listen 127.0.0.1:${ctrlPort}`,
    'rtp_ports 31000-31999',
    '',
  ].join('\n'));
  writeFileSync(join(dir, 'tone.wav'), toneWav());
  writeFileSync(join(dir, 'accounts'), '<sip:bob@127.0.0.1>;regint=0;answermode=auto\n');
  const child = spawn('baresip', ['-f', dir, '-4'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const waiters: { pattern: RegExp; resolve: () => void }[] = [];
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
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return {
    child,
    sipPort,
    output: () => out,
    waitFor: (pattern, ms = 10_000) => new Promise<void>((resolve, reject) => {
      if (pattern.test(out)) return resolve();
      const timer = setTimeout(() => reject(new Error(`baresip did not print ${String(pattern)}:\n${out.slice(-1500)}`)), ms);
      waiters.push({ pattern, resolve: () => { clearTimeout(timer); resolve(); } });
    }),
    command: (command, params) => new Promise<void>((resolve, reject) => {
      const json = JSON.stringify({ command, ...(params !== undefined ? { params } : {}), token: 't' });
      const s = connect(ctrlPort, '127.0.0.1', () => {
        s.end(`${Buffer.byteLength(json)}:${json},`);
      });
      s.on('error', reject);
      s.on('close', () => resolve());
      setTimeout(() => s.destroy(), 1000);
    }),
  };
}

/** Two seconds of a 440 Hz tone, 8 kHz mono 16-bit PCM WAV (baresip's aufile plays it as the microphone). */
function toneWav(): Buffer {
  const rate = 8000;
  const samples = rate * 2;
  const b = Buffer.alloc(44 + samples * 2);
  b.write('RIFF', 0);
  b.writeUInt32LE(36 + samples * 2, 4);
  b.write('WAVEfmt ', 8);
  b.writeUInt32LE(16, 16);
  b.writeUInt16LE(1, 20);
  b.writeUInt16LE(1, 22);
  b.writeUInt32LE(rate, 24);
  b.writeUInt32LE(rate * 2, 28);
  b.writeUInt16LE(2, 32);
  b.writeUInt16LE(16, 34);
  b.write('data', 36);
  b.writeUInt32LE(samples * 2, 40);
  for (let i = 0; i < samples; i++) b.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)), 44 + i * 2);
  return b;
}
