/** @module One pocketsphinx process hearing one party of one call: audio in through a named pipe, utterances out, bounded in memory and time. */
import { execFile, type ChildProcess } from 'node:child_process';
import { constants, open as openFd } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Clock } from '../../common/clock.js';
import type { Logger } from '../../common/logger.js';
import type { RecognitionHandlers, RecognitionStream, RecognizedUtterance } from '../../engine/calls/ports.js';
import { PocketsphinxOutputParser } from './pocketsphinx-output.js';

const execFileAsync = promisify(execFile);
const openFdAsync = promisify(openFd);

/** Options of {@link PocketsphinxStream}. */
export interface PocketsphinxStreamOptions {
  /** Starts the decoder reading raw 16 kHz PCM from `infile`. */
  spawn(infile: string): ChildProcess;
  clock: Clock;
  log: Logger;
  tmpDir?: string;
  handlers: RecognitionHandlers;
  /** Bytes waiting for the decoder beyond which new audio is dropped. */
  maxBacklogBytes: number;
  closeTimeoutMs: number;
  /** The command does not exist (spawn ENOENT). */
  onMissing(message: string): void;
}

/** 16 kHz, 16-bit mono. */
const BYTES_PER_MS = 32;
/** Silence written on pause so the decoder's VAD ends the utterance in progress instead of joining it to speech after the hold. */
const PAUSE_TAIL_MS = 600;
/** Utterances kept per stream: about one every two seconds for a whole day. */
export const MAX_UTTERANCES = 50_000;
/** Characters of stderr kept to explain a failure. */
const STDERR_TAIL = 2048;
/** Time shifts kept (one per hold or run of dropped audio); past it, later times are off by the rest. */
const MAX_SHIFTS = 4096;

type StreamState = 'starting' | 'running' | 'closing' | 'closed' | 'failed';

/**
 * pocketsphinx_continuous reads `-infile` with fopen, so it cannot take a socket as stdin (what
 * Node gives a child): the audio goes through a FIFO in a private temporary folder instead. The
 * FIFO is opened read-write and non-blocking, so opening never waits for the reader and a dead
 * reader never blocks the event loop; its fd is close-on-exec, so ending our side is the decoder's
 * end of file.
 *
 * Times: the decoder counts the audio it read. Pause silence it read and audio we dropped are
 * kept as shifts, so utterances are reported in the time of the audio given to write().
 */
export class PocketsphinxStream implements RecognitionStream {
  readonly #o: PocketsphinxStreamOptions;
  readonly #parser = new PocketsphinxOutputParser();
  readonly #utterances: RecognizedUtterance[] = [];
  /** Before the pipe is open: audio kept in order (bounded like the socket's backlog). */
  #early: Buffer[] = [];
  #earlyBytes = 0;
  #state: StreamState = 'starting';
  #paused = false;
  #socket: Socket | null = null;
  #child: ChildProcess | null = null;
  #dir: string | null = null;
  /** Audio handed to the decoder, in its own time (ms), pause silence included. */
  #decoderMs = 0;
  /** From decoder time `atMs` on, add `deltaMs` to get write() time. */
  readonly #shifts: { atMs: number; deltaMs: number }[] = [];
  #droppedMs = 0;
  #stderr = '';
  #closing: Promise<RecognizedUtterance[]> | null = null;
  readonly #ready: Promise<void>;
  readonly #exited: Promise<void>;
  #onExited: () => void = () => undefined;

  constructor(options: PocketsphinxStreamOptions) {
    this.#o = options;
    this.#exited = new Promise<void>((resolve) => { this.#onExited = resolve; });
    this.#ready = this.#start().catch((err: unknown) => {
      this.#fail(`cannot start: ${(err as Error).message}`);
      this.#onExited();
    });
  }

  write(pcm: Int16Array): void {
    if (this.#paused || !this.#accepting()) return;
    // A copy: the caller reuses its array, and the socket keeps what it cannot send yet.
    this.#send(Buffer.from(new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength)));
  }

  pause(): void {
    if (this.#paused) return;
    this.#paused = true;
    if (!this.#accepting()) return;
    const atMs = this.#decoderMs;
    if (this.#send(Buffer.alloc(PAUSE_TAIL_MS * BYTES_PER_MS))) this.#shift(atMs + PAUSE_TAIL_MS, -PAUSE_TAIL_MS);
  }

  resume(): void {
    this.#paused = false;
  }

  close(): Promise<RecognizedUtterance[]> {
    this.#closing ??= this.#finish();
    return this.#closing;
  }

  async #start(): Promise<void> {
    const dir = await mkdtemp(join(this.#o.tmpDir ?? tmpdir(), 'vgw-asr-'));
    this.#dir = dir;
    const fifo = join(dir, 'audio.raw');
    await execFileAsync('mkfifo', ['-m', '600', fifo]);
    const fd = await openFdAsync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
    const socket = new Socket({ fd, readable: false, writable: true });
    this.#socket = socket;
    socket.on('error', (err) => this.#fail(`audio pipe: ${err.message}`));
    if (this.#state === 'failed') {
      socket.destroy();
      this.#onExited();
      return;
    }
    // Closed while starting (a very short call): the decoder still hears what was written.
    const child = this.#o.spawn(fifo);
    this.#child = child;
    if (this.#state === 'starting') this.#state = 'running';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => this.#heard(this.#parser.push(chunk)));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => { this.#stderr = (this.#stderr + chunk).slice(-STDERR_TAIL); });
    child.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') this.#o.onMissing('command not found');
      this.#fail(err.code === 'ENOENT' ? 'command not found' : err.message, true);
      this.#onExited();
    });
    // 'close' comes after stdout has ended: every line has been parsed.
    child.on('close', (code, signal) => {
      this.#heard(this.#parser.end());
      if (this.#state === 'running') this.#fail(`exited (${signal ?? code}) before the stream ended: ${this.#lastError()}`);
      this.#onExited();
    });
    const early = this.#early;
    this.#early = [];
    this.#earlyBytes = 0;
    for (const chunk of early) socket.write(chunk);
  }

  /** Queues audio unless the backlog is full; false when dropped. */
  #send(chunk: Buffer): boolean {
    const backlog = this.#earlyBytes + (this.#socket?.writableLength ?? 0);
    const ms = chunk.length / BYTES_PER_MS;
    if (backlog + chunk.length > this.#o.maxBacklogBytes) {
      // The decoder is behind (machine overloaded): losing audio beats growing without bound.
      if (this.#droppedMs === 0) this.#o.log.warn('pocketsphinx is behind; audio is dropped until it catches up');
      this.#droppedMs += ms;
      this.#shift(this.#decoderMs, ms);
      return false;
    }
    this.#decoderMs += ms;
    if (this.#socket !== null) this.#socket.write(chunk);
    else {
      this.#early.push(chunk);
      this.#earlyBytes += chunk.length;
    }
    return true;
  }

  #shift(atMs: number, deltaMs: number): void {
    const last = this.#shifts.at(-1);
    if (last !== undefined && last.atMs === atMs) last.deltaMs += deltaMs;
    else if (this.#shifts.length < MAX_SHIFTS) this.#shifts.push({ atMs, deltaMs });
  }

  /** Decoder time to write() time. */
  #writeMsOf(decoderMs: number): number {
    let ms = decoderMs;
    for (const shift of this.#shifts) {
      if (shift.atMs > decoderMs) break;
      ms += shift.deltaMs;
    }
    return Math.max(0, ms);
  }

  #heard(utterances: RecognizedUtterance[]): void {
    for (const u of utterances) {
      if (this.#utterances.length >= MAX_UTTERANCES) return;
      const mapped = { text: u.text, startMs: this.#writeMsOf(u.startMs), endMs: this.#writeMsOf(u.endMs) };
      this.#utterances.push(mapped);
      this.#o.handlers.onFinal?.(mapped);
    }
  }

  #accepting(): boolean {
    return this.#state === 'starting' || this.#state === 'running';
  }

  /** `always`: report even while closing (the decoder never ran, rather than ended early). */
  #fail(message: string, always = false): void {
    if (this.#state === 'failed' || this.#state === 'closed') return;
    const wasClosing = this.#state === 'closing';
    this.#state = 'failed';
    this.#early = [];
    this.#socket?.destroy();
    // A failure while closing (the decoder gone before our end of file) loses nothing more.
    if (wasClosing && !always) return;
    this.#o.log.warn({ error: message }, 'pocketsphinx stream failed');
    this.#o.handlers.onError?.(`pocketsphinx ${message}`);
  }

  async #finish(): Promise<RecognizedUtterance[]> {
    if (this.#accepting()) this.#state = 'closing';
    await this.#ready;
    // End of file for the decoder: it decodes what it has, prints the last utterance, exits.
    this.#socket?.end();
    if (this.#child === null) this.#onExited();
    const timer = this.#o.clock.setTimeout(() => {
      this.#o.log.warn({ timeout_ms: this.#o.closeTimeoutMs }, 'pocketsphinx did not finish in time; stopping it');
      this.#child?.kill('SIGKILL');
      this.#onExited();
    }, this.#o.closeTimeoutMs);
    await this.#exited;
    timer.cancel();
    // A decoder stopped at the time-out leaves unread audio in the pipe; we hold the FIFO's read
    // side too, so those writes never fail and, pending, would keep the fd and the event loop
    // alive (a SIGTERM'd gateway then never exits). The decoder is gone: nothing more can be read.
    this.#socket?.destroy();
    if (this.#state === 'closing') this.#state = 'closed';
    if (this.#dir !== null) await rm(this.#dir, { recursive: true, force: true }).catch(() => undefined);
    if (this.#droppedMs > 0) this.#o.log.warn({ dropped_ms: this.#droppedMs }, 'pocketsphinx could not keep up; some audio was not transcribed');
    return [...this.#utterances];
  }

  #lastError(): string {
    const lines = this.#stderr.split('\n').filter((l) => /ERROR|FATAL/.test(l));
    return lines.at(-1)?.trim() ?? 'no error printed';
  }
}
