/**
 * @module Which errors mean "storage cannot be used right now" (docs/RELIABILITY.md, storage
 * failures): a database another process holds locked past the busy time-out, a full or failing
 * disk, a read-only file system, a PostgreSQL server that is down or unreachable. The caller may
 * keep its state and write it again later (the writes retried so are idempotent); it is not a bug.
 */

/** SQLite result codes (better-sqlite3's `SqliteError.code`, extended codes included by prefix). */
const SQLITE_UNAVAILABLE = ['SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_FULL', 'SQLITE_IOERR', 'SQLITE_CANTOPEN', 'SQLITE_READONLY', 'SQLITE_PROTOCOL', 'SQLITE_NOMEM'];
/** Node file-system codes of the same kind (the CDR journal, recordings). */
const FS_UNAVAILABLE = new Set(['ENOSPC', 'EDQUOT', 'EIO', 'EROFS', 'EBUSY', 'EAGAIN', 'EMFILE', 'ENFILE']);

/**
 * PostgreSQL (SQLSTATE, the `pg` client's `code`): classes 08 connection exception, 53
 * insufficient resources (disk full, out of memory, too many connections), 58 system error (I/O);
 * 57P01-57P03 the server shutting down or not yet accepting connections; 25006 a read-only
 * (standby) server; 40001 and 40P01 a serialization failure or deadlock, which a retry resolves.
 */
const POSTGRES_UNAVAILABLE_CLASSES = ['08', '53', '58'];
const POSTGRES_UNAVAILABLE = new Set(['57P01', '57P02', '57P03', '25006', '40001', '40P01']);
/** The server cannot be reached or the connection broke (Node socket codes). */
const NETWORK_UNAVAILABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH']);
/** `pg` reports a connection lost (mid-query, or before the next one) or a pool timeout by message only (no code). */
const PG_CONNECTION_LOST = /^(Connection terminated|Client has encountered a connection error|Client was closed|timeout exceeded when trying to connect)/;

const isPostgresOutage = (code: string): boolean =>
  /^[0-9A-Z]{5}$/.test(code) && (POSTGRES_UNAVAILABLE.has(code) || POSTGRES_UNAVAILABLE_CLASSES.includes(code.slice(0, 2)));

/** True when `err` is a storage outage (lock held, disk full, I/O error, database unreachable), not a bug. */
export function isStorageFailure(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (typeof code !== 'string') return typeof message === 'string' && PG_CONNECTION_LOST.test(message);
  return FS_UNAVAILABLE.has(code) || NETWORK_UNAVAILABLE.has(code) || isPostgresOutage(code)
    || SQLITE_UNAVAILABLE.some((c) => code === c || code.startsWith(`${c}_`));
}
