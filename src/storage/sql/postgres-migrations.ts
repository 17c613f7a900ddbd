/**
 * @module The numbered migrations of PostgreSQL (migrations/postgres/, the same numbers and names
 * as SQLite's: docs/DECISIONS.md "Two migration folders"), applied at start. Several processes
 * start together against one database, so they run in one transaction that first takes an
 * advisory lock: the first applies what is pending, the others wait and then find nothing to do.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { SqlExecutor } from './sql-database.js';

export const POSTGRES_MIGRATIONS_DIR = fileURLToPath(new URL('../migrations/postgres/', import.meta.url));

/** The advisory lock's key: any constant the gateway alone uses ("vgw" + "mig" in ASCII). */
const MIGRATION_LOCK_KEY = 0x766777_6d6967;

export interface MigrationFile {
  version: number;
  name: string;
  sql: string;
}

/** The files `NNN-name.sql` of a migrations folder, in order. */
export function readMigrationFiles(dir: string): MigrationFile[] {
  return readdirSync(dir)
    .filter((f) => /^\d{3}-[\w-]+\.sql$/.test(f))
    .sort()
    .map((f) => ({ version: Number(f.slice(0, 3)), name: f, sql: readFileSync(`${dir}/${f}`, 'utf8') }));
}

/** Applies the pending migrations, all or none, holding the advisory lock until they commit. */
export async function migratePostgres(db: SqlExecutor, dir = POSTGRES_MIGRATIONS_DIR): Promise<number[]> {
  return db.transaction(async (session) => {
    await session.run('SELECT pg_advisory_xact_lock(?)', [MIGRATION_LOCK_KEY]);
    await session.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
    const applied = new Set((await session.all<{ version: number }>('SELECT version FROM schema_migrations')).map((r) => r.version));
    const done: number[] = [];
    for (const m of readMigrationFiles(dir)) {
      if (applied.has(m.version)) continue;
      await session.exec(m.sql);
      await session.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [m.version, m.name, new Date().toISOString()]);
      done.push(m.version);
    }
    return done;
  });
}
