/**
 * @module The one port through which recordings are written and read (docs/ARCHITECTURE.md
 * "Process roles"): an engine writes a call's recording, an API process (maybe another one) serves
 * it, and post-call webhooks archive providers' copies. Keys are paths relative to the
 * recordings folder (`<tenant>/<call>.wav`), as stored in the database; an object store can
 * implement the same port later. Files are read and written through fs/promises only.
 */
import { createReadStream } from 'node:fs';
import { mkdir, open, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, normalize, sep } from 'node:path';
import type { Readable } from 'node:stream';

/** A stored recording opened for reading. */
export interface StoredRecording {
  size: number;
  /** Its first bytes (up to the requested count), for the format check. */
  head: Buffer;
  /** Its content from the start; call once. */
  stream: () => Readable;
}

export interface RecordingFiles {
  /**
   * A local file to stream a recording into while a call lasts (the WAV writer seeks back to
   * fix its header), with its folder made; it is readable by key once written. Recovery after
   * a crash repairs the same file.
   */
  writable(key: string): Promise<string>;
  /** The local file of a key, for recovery's repair; null when the port keeps no local copy. */
  localFile(key: string): string | null;
  /** Stores a whole recording atomically (temporary name, then rename), readable by the gateway's user only. */
  write(key: string, bytes: Buffer): Promise<void>;
  /** Opens a stored recording; rejects when it cannot be read (gone, unreadable). */
  read(key: string, headBytes: number): Promise<StoredRecording>;
}

/**
 * Recordings in a folder both the engine and the API process reach (`recordings.dir`). A key
 * that is an absolute path (a row written before keys were relative, or set by an operator) is
 * read where it points; a relative key never leaves the folder.
 */
export class FolderRecordingFiles implements RecordingFiles {
  readonly #dir: string;

  constructor(dir: string) {
    this.#dir = dir;
  }

  get dir(): string {
    return this.#dir;
  }

  #file(key: string): string {
    if (isAbsolute(key)) return key;
    const relative = normalize(key);
    if (relative === '..' || relative.startsWith(`..${sep}`)) throw new Error(`recording key outside the recordings folder: ${key}`);
    return join(this.#dir, relative);
  }

  async writable(key: string): Promise<string> {
    const file = this.#file(key);
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
    return file;
  }

  localFile(key: string): string | null {
    return this.#file(key);
  }

  async write(key: string, bytes: Buffer): Promise<void> {
    const file = await this.writable(key);
    const temporary = `${file}.partial`;
    try {
      await writeFile(temporary, bytes, { mode: 0o600 });
      await rename(temporary, file);
    } catch (err) {
      await rm(temporary, { force: true }).catch(() => undefined);
      throw err;
    }
  }

  async read(key: string, headBytes: number): Promise<StoredRecording> {
    const file = this.#file(key);
    const handle = await open(file, 'r');
    try {
      const head = Buffer.alloc(headBytes);
      const [{ bytesRead }, info] = await Promise.all([handle.read(head, 0, headBytes, 0), stat(file)]);
      return { size: info.size, head: head.subarray(0, bytesRead), stream: () => createReadStream(file) };
    } finally {
      await handle.close();
    }
  }
}
