/**
 * @module A throw-away PostgreSQL database per test file, on the server named by
 * VGW_TEST_DATABASE_URL (an administrator's URL; `.ci/run` starts such a server on loopback).
 * Each call of {@link testDatabase} creates a database with a random name and drops it in the
 * test's teardown, so parallel tap files never share tables. Without the variable the
 * PostgreSQL half of a test skips through {@link missingPeer}: a failure under VGW_REQUIRE_INTEROP=1.
 *
 * VGW_TEST_BACKEND=postgres switches whole test files to PostgreSQL: `buildApp` and
 * `startTestGateway` then open their store on a fresh database of that server instead of SQLite
 * (`.ci/run` runs a selection of API and call scenario files again so). Asked for and impossible
 * (no server given) is an error, not a skip.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Test } from 'tap';
import { openSqlDatabase, type SqlDatabase } from '../../src/storage/index.js';
import { missingPeer } from './peers.js';

export const TEST_DATABASE_URL_ENV = 'VGW_TEST_DATABASE_URL';

/** The backends a storage test runs on: SQLite always, PostgreSQL when a server is given. */
export type Backend = 'sqlite' | 'postgres';
export const BACKENDS: readonly Backend[] = ['sqlite', 'postgres'];

const adminUrl = (): string | undefined => process.env[TEST_DATABASE_URL_ENV] || undefined;

/** `url` with its database replaced by `name`. */
function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function onAdmin<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

interface Teardown {
  teardown(fn: () => void | Promise<void>): void;
}

/** Creates a database with a random name on `admin`, dropped (connections and all) when `t` ends. */
async function createDatabase(t: Teardown, admin: string): Promise<string> {
  const name = `vgw_test_${randomBytes(6).toString('hex')}`;
  await onAdmin(admin, (client) => client.query(`CREATE DATABASE ${name}`));
  t.teardown(async () => { await onAdmin(admin, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)); });
  return withDatabase(admin, name);
}

export const TEST_BACKEND_ENV = 'VGW_TEST_BACKEND';

/** The backend VGW_TEST_BACKEND asks whole test files to run on (SQLite when unset). */
export function switchedBackend(): Backend {
  const value = process.env[TEST_BACKEND_ENV] || 'sqlite';
  if (value !== 'sqlite' && value !== 'postgres') throw new Error(`${TEST_BACKEND_ENV} must be sqlite or postgres, not ${value}`);
  return value;
}

/**
 * Under VGW_TEST_BACKEND=postgres, the URL of a fresh database dropped when `t` ends; otherwise
 * undefined (the caller opens SQLite as usual).
 */
export async function switchedDatabase(t: Teardown): Promise<string | undefined> {
  if (switchedBackend() === 'sqlite') return undefined;
  const admin = adminUrl();
  if (admin === undefined) throw new Error(`${TEST_BACKEND_ENV}=postgres needs ${TEST_DATABASE_URL_ENV} (an administrator's URL to a running server)`);
  return createDatabase(t, admin);
}

/**
 * A URL to a fresh, empty database dropped when `t` ends; or undefined (after a skip, or a
 * failure under VGW_REQUIRE_INTEROP=1) when VGW_TEST_DATABASE_URL is unset. `t` is not ended: the
 * caller leaves out its PostgreSQL part and goes on.
 */
export async function testDatabase(t: Test): Promise<string | undefined> {
  const admin = adminUrl();
  if (admin === undefined) {
    missingPeer(t, `PostgreSQL half left out: ${TEST_DATABASE_URL_ENV} is unset (bash .ci/run starts a server)`, { end: false });
    return undefined;
  }
  return createDatabase(t, admin);
}

/**
 * The location of a fresh store on `backend` (`:memory:` for SQLite), or undefined when the
 * PostgreSQL half is left out (see {@link testDatabase}).
 */
export function storeLocation(t: Test, backend: Backend): Promise<string | undefined> {
  return backend === 'sqlite' ? Promise.resolve(':memory:') : testDatabase(t);
}

/** A migrated SQL port on `backend`, closed in teardown; undefined when PostgreSQL is left out. */
export async function testSqlDatabase(t: Test, backend: Backend): Promise<SqlDatabase | undefined> {
  const location = await storeLocation(t, backend);
  if (location === undefined) return undefined;
  const db = await openSqlDatabase(location);
  t.teardown(() => db.close());
  return db;
}
