/**
 * docs/ARCHITECTURE.md "Running on PostgreSQL": ids and timestamps compare byte by byte on
 * PostgreSQL as in SQLite (BINARY), whatever locale the database was created with, so keyset
 * pages, cursors and time comparisons (`next_attempt_at <= now`) come out in the same order on
 * both. Checked on the migrated schema: every text column that holds an id or a time (`id`,
 * `…_id`, `…_at`, `…_until`) is declared `COLLATE "C"`, not left to the database's default (the
 * migrator's own `schema_migrations` aside).
 */
import t from 'tap';
import pg from 'pg';
import { openSqlDatabase } from '../../src/storage/index.js';
import { testDatabase } from '../support/postgres.js';

t.test('every id and time column of the PostgreSQL schema compares byte by byte (COLLATE "C")', async (t) => {
  const url = await testDatabase(t);
  if (url === undefined) return;
  const db = await openSqlDatabase(url);
  await db.close();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  t.teardown(() => client.end());
  const { rows } = await client.query<{ table_name: string; column_name: string; collation_name: string | null }>(`
    SELECT table_name, column_name, collation_name FROM information_schema.columns
     WHERE table_schema = 'public' AND data_type = 'text' AND table_name != 'schema_migrations'
       AND (column_name = 'id' OR column_name LIKE '%\\_id' OR column_name LIKE '%\\_at' OR column_name LIKE '%\\_until')
     ORDER BY table_name, column_name`);
  t.ok(rows.length >= 40, `${rows.length} id and time columns`);
  t.same(rows.filter((r) => r.collation_name !== 'C').map((r) => `${r.table_name}.${r.column_name}`), [], 'none left to the database\'s collation');
});
