/**
 * @module The file side of a recording: a WAV file created with an empty header, audio appended
 * with the header's sizes patched after each append, a JSON sidecar beside it, all through one
 * serialised queue whose first failure stops the rest and is kept for close. Apart from
 * stereo-recorder.ts, which places samples in time and knows nothing of file handles.
 */
import { open, writeFile, type FileHandle } from 'node:fs/promises';
import { buildWavHeader, DATA_SIZE_OFFSET, RIFF_SIZE_OFFSET, sizeFields, WAV_HEADER_BYTES } from './wav-header.js';

/** A 16-bit PCM WAV file that grows as audio is appended, readable at every step (crash-safe up to the last append). */
export class WavFileWriter {
  readonly path: string;
  readonly #fh: FileHandle;
  /** Data bytes handed to the queue so far: where the next append lands. */
  #queuedBytes = 0;
  #io: Promise<void> = Promise.resolve();
  #error: unknown;

  private constructor(path: string, fh: FileHandle) {
    this.path = path;
    this.#fh = fh;
  }

  /** Creates the file (never overwriting one) with a header for no samples yet. */
  static async create(path: string, format: { channels: number; sampleRate: number }): Promise<WavFileWriter> {
    const fh = await open(path, 'wx');
    await fh.write(buildWavHeader(format, 0), 0, WAV_HEADER_BYTES, 0);
    return new WavFileWriter(path, fh);
  }

  /** The first write that failed, if any (later writes were skipped). */
  get error(): unknown {
    return this.#error;
  }

  /** Appends `data` (which the caller must not touch again), then patches the header's sizes. */
  append(data: Buffer): void {
    const offset = WAV_HEADER_BYTES + this.#queuedBytes;
    this.#queuedBytes += data.length;
    const total = this.#queuedBytes;
    this.#queue(async () => {
      await this.#fh.write(data, 0, data.length, offset);
      const { riff, data: dataSize } = sizeFields(total);
      await this.#fh.write(riff, 0, 4, RIFF_SIZE_OFFSET);
      await this.#fh.write(dataSize, 0, 4, DATA_SIZE_OFFSET);
    });
  }

  /** Replaces `<path>.json` with `json`. */
  saveSidecar(json: string): void {
    this.#queue(() => writeFile(`${this.path}.json`, json));
  }

  /** Closes the file after what is queued, even after a failure. Resolves like {@link flushed}. */
  close(): Promise<void> {
    this.#queue(() => this.#fh.close(), true);
    return this.flushed();
  }

  /** Resolves when every operation queued so far has run. */
  async flushed(): Promise<void> {
    await this.#io;
  }

  /** Serialises file operations; the first failure stops the rest and is kept in {@link error}. */
  #queue(op: () => Promise<unknown>, evenAfterError = false): void {
    this.#io = this.#io.then(async () => {
      if (this.#error !== undefined && !evenAfterError) return;
      try {
        await op();
      } catch (err) {
        this.#error ??= err;
      }
    });
  }
}
