/**
 * docs/DECISIONS.md "Two migration folders": SQLite's migrations/ and PostgreSQL's
 * migrations/postgres/ hold the same numbered files, so a schema change is never made for one
 * engine alone; and the build copies both into dist/.
 */
import t from 'tap';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { POSTGRES_MIGRATIONS_DIR, readMigrationFiles } from './sql/postgres-migrations.js';

const SQLITE_MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

t.test('both migration folders hold the same versions under the same names', (t) => {
  const sqlite = readMigrationFiles(SQLITE_MIGRATIONS_DIR).map((m) => m.name);
  const postgres = readMigrationFiles(POSTGRES_MIGRATIONS_DIR).map((m) => m.name);
  t.ok(sqlite.length >= 19, `${sqlite.length} SQLite migrations`);
  t.same(postgres, sqlite);
  t.same(readdirSync(POSTGRES_MIGRATIONS_DIR).filter((f) => !f.endsWith('.sql')), [], 'nothing else in the PostgreSQL folder');
  t.end();
});
