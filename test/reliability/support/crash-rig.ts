/**
 * @module The crash rig: a gateway config over a data folder, a small API client, and the checks
 * made after a kill -9 (a WAV's RIFF header against its length, the database's integrity, and
 * the decoder processes a killed gateway left behind).
 */
import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import wavefile from 'wavefile';

/**
 * Two config files over one data folder and one set of ports, for a gateway on loopback (port 0)
 * with agents allowed on 127.0.0.1: `transcribing` turns on pocketsphinx for the caller's side
 * (when `transcription` is set), `plain` does not.
 */
export function writeCrashConfig(dir: string, options: { transcription: boolean; announcement: string }): { transcribing: string; plain: string; dataDir: string } {
  const dataDir = join(dir, 'data');
  const rtpMin = 30000 + 2 * Math.floor(Math.random() * 4500);
  const common = [
    `data_dir: ${JSON.stringify(dataDir)}`,
    'log_level: info',
    'http:\n  host: 127.0.0.1\n  port: 0\n  rate_limit_per_second: 10000\n  rate_limit_burst: 10000',
    'sip:\n  host: 127.0.0.1\n  port: 0',
    // Each outbound call takes one RTP pair on the gateway and one on the sandbox far end.
    `rtp:\n  port_min: ${rtpMin}\n  port_max: ${rtpMin + 999}`,
    `sandbox:\n  ring_ms: 200\n  announcement: ${JSON.stringify(options.announcement)}`,
    'calls:\n  allow_private_agent_urls: true',
  ];
  const transcribing = join(dir, 'config.yaml');
  const plain = join(dir, 'config-plain.yaml');
  writeFileSync(transcribing, [...common, options.transcription ? 'transcription:\n  engine: pocketsphinx\n  channels: [caller]' : ''].join('\n'));
  writeFileSync(plain, common.join('\n'));
  return { transcribing, plain, dataDir };
}

export interface Reply<T> {
  status: number;
  body: T;
  raw: Buffer;
}

/** The fields of a call detail the crash checks read. */
export interface CallDetail {
  id: string;
  state: string;
  end_reason: string | null;
  answered_at: string | null;
  cdr: { started_at: string; answered_at: string | null; ended_at: string; duration_s: number; billable_s: number; end_reason: string; hangup_by: string | null } | null;
  transcript: { available: boolean; source: string | null };
  recording: { available: boolean };
}

/** JSON over HTTP with a bearer key; the raw body is kept for byte comparisons. */
export async function request<T>(base: string, key: string, method: string, path: string, body?: unknown): Promise<Reply<T>> {
  const res = await fetch(`${base}${path}`, {
    method, headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const raw = Buffer.from(await res.arrayBuffer());
  const text = raw.toString('utf8');
  return { status: res.status, body: parseJson(text) as T, raw };
}

/** JSON, or null for bodies that are not (a recording: the caller reads `raw`). */
function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return null;
  }
}

/** Every id of a paged call list (`/v1/calls` or `/v1/calls?state=ended`). */
export async function listIds(base: string, key: string, query: string): Promise<Set<string>> {
  const ids = new Set<string>();
  let cursor: string | null = null;
  do {
    const sep = query ? '&' : '';
    const path: string = `/v1/calls?${query}${sep}limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const page: Reply<{ data: { id: string }[]; next_cursor: string | null }> = await request(base, key, 'GET', path);
    if (page.status !== 200) throw new Error(`GET ${path}: ${page.status} ${page.raw.toString()}`);
    for (const c of page.body.data) ids.add(c.id);
    cursor = page.body.next_cursor;
  } while (cursor);
  return ids;
}

/** What a WAV's RIFF header says, and whether it agrees with the bytes it came in. */
export interface WavCheck {
  channels: number;
  sampleRate: number;
  bitsPerSample: number;
  dataBytes: number;
  /** RIFF size = length - 8 and data size = length - 44, whole frames only. */
  consistent: boolean;
  seconds: number;
}

/** Parses the file with wavefile and compares its sizes with the buffer's length. */
export function checkWav(file: Buffer): WavCheck {
  const wav = new wavefile.WaveFile(file);
  const fmt = wav.fmt as { numChannels: number; sampleRate: number; bitsPerSample: number; blockAlign: number };
  const data = wav.data as { chunkSize: number };
  const riffSize = file.readUInt32LE(4);
  const consistent = riffSize === file.length - 8 && data.chunkSize === file.length - 44 && data.chunkSize % fmt.blockAlign === 0;
  return {
    channels: fmt.numChannels, sampleRate: fmt.sampleRate, bitsPerSample: fmt.bitsPerSample, dataBytes: data.chunkSize,
    consistent, seconds: data.chunkSize / fmt.blockAlign / fmt.sampleRate,
  };
}

/** `PRAGMA integrity_check` over a read-only connection (safe beside a running gateway: WAL). */
export function integrityCheck(dbFile: string): string {
  const db = new Database(dbFile, { readonly: true, fileMustExist: true });
  try {
    const rows = db.pragma('integrity_check') as { integrity_check: string }[];
    return rows.map((r) => r.integrity_check).join('; ');
  } finally {
    db.close();
  }
}

export const sha256 = (data: Buffer | string): string => createHash('sha256').update(data).digest('hex');

/** `ps` lines (pid, command name cut to 15 characters) of a process's direct children. */
function psChildren(pid: number): string {
  try {
    return execFileSync('ps', ['-o', 'pid=,comm=', '--ppid', String(pid)], { encoding: 'utf8' });
  } catch {
    return ''; // ps exits 1 when there are none
  }
}

/** Pids of a process's direct children running `command` (the decoders a gateway spawned, not tsx's esbuild). */
export function childPids(pid: number, command: string): number[] {
  return psChildren(pid).split('\n').map((line) => line.trim().split(/\s+/)).filter(([, comm]) => comm !== undefined && command.startsWith(comm)).map(([p]) => Number(p));
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
