/** @module The better-sqlite3 handle behind a store, for tests that read or bend the SQLite file itself. */
import type Database from 'better-sqlite3';
import { SqliteDatabase, type Store } from '../../src/storage/index.js';

/** Throws when the store is not on SQLite: such a test is SQLite-only. */
export function sqliteOf(store: Pick<Store, 'db'>): Database.Database {
  if (!(store.db instanceof SqliteDatabase)) throw new Error('this test reads the SQLite file and needs the SQLite store');
  return store.db.sqlite;
}
