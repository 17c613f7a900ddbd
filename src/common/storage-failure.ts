/**
 * @module Which errors mean "storage cannot be used right now" (docs/RELIABILITY.md, storage
 * failures): a database another process holds locked past the busy time-out, a full or failing
 * disk, a read-only file system. Such a write was not applied (an SQLite statement is atomic), so
 * the caller may keep its state and try again later; it is not a bug.
 */

/** SQLite result codes (better-sqlite3's `SqliteError.code`, extended codes included by prefix). */
const SQLITE_UNAVAILABLE = ['SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_FULL', 'SQLITE_IOERR', 'SQLITE_CANTOPEN', 'SQLITE_READONLY', 'SQLITE_PROTOCOL', 'SQLITE_NOMEM'];
/** Node file-system codes of the same kind (the CDR journal, recordings). */
const FS_UNAVAILABLE = new Set(['ENOSPC', 'EDQUOT', 'EIO', 'EROFS', 'EBUSY', 'EAGAIN', 'EMFILE', 'ENFILE']);

/** True when `err` is a storage outage (lock held, disk full, I/O error), not a bug. */
export function isStorageFailure(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string') return false;
  return FS_UNAVAILABLE.has(code) || SQLITE_UNAVAILABLE.some((c) => code === c || code.startsWith(`${c}_`));
}
