/**
 * @module The CDR journal: call records (with their transcripts) the database refused, kept in
 * the data folder until they are written (docs/RELIABILITY.md, storage failures and the CDR
 * journal). One JSON object per line, appended and fsynced before the append resolves, so a
 * record survives the process; rewritten whole (temporary file, fsync, rename) once some of them
 * are in the database. A torn last line (a crash mid-append) is skipped when read.
 */
import { readFileSync } from 'node:fs';
import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import type { CallRecord } from '../engine/calls/call-record.js';
import type { TranscriptSource, TranscriptTurn } from './transcript-repository.js';

/** The journal file, in the data folder. */
export const CDR_JOURNAL_FILE = 'cdr-journal.jsonl';

/** One call's final record and the transcripts stored with it. */
export interface CdrJournalEntry {
  call: CallRecord;
  transcripts: { source: TranscriptSource; turns: TranscriptTurn[] }[];
}

/** The file operations the journal uses (a seam for tests that make the disk fail). */
export type JournalFs = Pick<typeof fsp, 'open' | 'rename' | 'rm'>;

export class CdrJournal {
  readonly path: string;
  readonly #fs: JournalFs;
  /** Appends and rewrites run one at a time, in order. */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(dataDir: string, fs: JournalFs = fsp) {
    this.path = join(dataDir, CDR_JOURNAL_FILE);
    this.#fs = fs;
  }

  /** The entries on disk, oldest first; unreadable lines are counted in `skipped`. */
  read(): { entries: CdrJournalEntry[]; skipped: number } {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { entries: [], skipped: 0 };
      throw err;
    }
    const entries: CdrJournalEntry[] = [];
    let skipped = 0;
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      try {
        const entry = JSON.parse(line) as Partial<CdrJournalEntry>;
        if (typeof entry.call?.id !== 'string' || !Array.isArray(entry.transcripts)) throw new Error('not an entry');
        entries.push(entry as CdrJournalEntry);
      } catch {
        skipped += 1;
      }
    }
    return { entries, skipped };
  }

  /** Appends one entry; resolves once it is on disk (fdatasync), rejects when the disk refuses it. */
  append(entry: CdrJournalEntry): Promise<void> {
    return this.#serial(async () => {
      const handle = await this.#fs.open(this.path, 'a', 0o600);
      try {
        await handle.appendFile(`${JSON.stringify(entry)}\n`);
        await handle.datasync();
      } finally {
        await handle.close();
      }
    });
  }

  /** Replaces the journal with `entries` (removes it when there are none). */
  rewrite(entries: readonly CdrJournalEntry[]): Promise<void> {
    return this.#serial(async () => {
      if (entries.length === 0) {
        await this.#fs.rm(this.path, { force: true });
        return;
      }
      const temporary = `${this.path}.tmp`;
      const handle = await this.#fs.open(temporary, 'w', 0o600);
      try {
        await handle.writeFile(entries.map((e) => `${JSON.stringify(e)}\n`).join(''));
        await handle.datasync();
      } finally {
        await handle.close();
      }
      await this.#fs.rename(temporary, this.path);
    });
  }

  /** Resolves once every append and rewrite asked for so far has finished (whatever its outcome). */
  settled(): Promise<void> {
    return this.#queue.then(() => undefined, () => undefined);
  }

  #serial(work: () => Promise<void>): Promise<void> {
    const run = this.#queue.then(work, work);
    this.#queue = run.catch(() => undefined);
    return run;
  }
}
