/**
 * @module Opens the SQLite database (WAL, foreign keys, busy timeout) and applies the numbered
 * migrations in migrations/ that it has not seen yet.
 */
import Database from 'better-sqlite3';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isPostgresUrl, type SqlDatabase } from './sql/sql-database.js';
import { SqliteDatabase } from './sql/sqlite-database.js';

export type Db = Database.Database;

/** The database file inside the data folder: the gateway and the CLI open the same one. */
export const databasePath = (dataDir: string): string => join(dataDir, 'gateway.db');

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

interface Migration {
  version: number;
  name: string;
  sql: string;
}

function readMigrations(dir: string): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{3}-[\w-]+\.sql$/.test(f))
    .sort()
    .map((f) => ({ version: Number(f.slice(0, 3)), name: f, sql: readFileSync(`${dir}/${f}`, 'utf8') }));
}

/** Applies pending migrations inside one IMMEDIATE transaction, so a CLI and a gateway starting together do not race. */
export function migrate(db: Db, dir = MIGRATIONS_DIR): number[] {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  const apply = db.transaction(() => {
    const applied = new Set(db.prepare('SELECT version FROM schema_migrations').pluck().all() as number[]);
    const done: number[] = [];
    for (const m of readMigrations(dir)) {
      if (applied.has(m.version)) continue;
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(m.version, m.name, new Date().toISOString());
      done.push(m.version);
    }
    return done;
  });
  return apply.immediate();
}

/**
 * How long a statement waits for another connection's lock before failing with SQLITE_BUSY
 * (`storage.busy_timeout_ms`). better-sqlite3 is synchronous, so the wait holds the event loop,
 * media and the API included: it is kept short, and a write that fails is retried later from the
 * CDR journal (docs/RELIABILITY.md, storage failures).
 */
export const DEFAULT_BUSY_TIMEOUT_MS = 250;

export interface DatabaseOptions {
  busyTimeoutMs?: number;
}

/**
 * Opens the database behind the SQL port: PostgreSQL for a `postgres://` URL, else the SQLite
 * file (created and migrated here, synchronously, before anything else runs).
 */
export async function openSqlDatabase(location: string, options: DatabaseOptions = {}): Promise<SqlDatabase> {
  if (isPostgresUrl(location)) {
    const { openPostgresDatabase } = await import('./sql/postgres-database.js');
    return openPostgresDatabase(location);
  }
  return new SqliteDatabase(openDatabase(location, options));
}

/** Opens (creating if needed) and migrates the database at `file`; `:memory:` for tests. */
export function openDatabase(file: string, options: DatabaseOptions = {}): Db {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS))}`);
  // NORMAL is durable across application crashes in WAL mode; only power loss can drop the last commits.
  db.pragma('synchronous = NORMAL');
  migrate(db);
  return db;
}
