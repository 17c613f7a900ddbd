/**
 * docs/RELIABILITY.md "Storage failures and the CDR journal" on PostgreSQL: a server that cannot
 * be reached, or that ends the connection under a transaction, is a storage outage (the engine
 * keeps the call record in the CDR journal and writes it again later), while a refused constraint
 * is not. Real errors from a real server and a real closed port on loopback.
 */
import t from 'tap';
import net from 'node:net';
import pg from 'pg';
import { isStorageFailure } from '../../src/common/storage-failure.js';
import { testSqlDatabase } from '../support/postgres.js';

const rejection = (p: Promise<unknown>): Promise<unknown> => p.then(() => undefined, (err: unknown) => err);

t.test('a PostgreSQL server nobody listens for is an outage (ECONNREFUSED)', async (t) => {
  const closed = net.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as net.AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  const pool = new pg.Pool({ connectionString: `postgres://nobody@127.0.0.1:${port}/none`, connectionTimeoutMillis: 5_000 });
  pool.on('error', () => undefined);
  t.teardown(() => pool.end());
  const err = await rejection(pool.query('SELECT 1'));
  t.ok(err, 'the query failed');
  t.ok(isStorageFailure(err), `an outage: ${String(err)}`);
});

t.test('a connection the server terminates mid-transaction is an outage; a unique violation is not', async (t) => {
  const db = await testSqlDatabase(t, 'postgres');
  if (!db) return;
  const admin = new pg.Client({ connectionString: process.env.VGW_TEST_DATABASE_URL });
  await admin.connect();
  t.teardown(() => admin.end());
  const err = await rejection(db.transaction(async (tx) => {
    const row = await tx.get<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    await admin.query('SELECT pg_terminate_backend($1)', [row!.pid]);
    await tx.get('SELECT 1 AS one');
  }));
  t.ok(err, 'the transaction failed');
  t.ok(isStorageFailure(err), `an outage: ${String(err)}`);
  t.equal((await db.get<{ one: number }>('SELECT 1 AS one'))?.one, 1, 'the pool connects again afterwards');
  await db.run("INSERT INTO tenants (id, name, created_at) VALUES ('ten_a', 'A', '2026-01-01T00:00:00.000Z')");
  const duplicate = await rejection(db.run("INSERT INTO tenants (id, name, created_at) VALUES ('ten_a', 'A', '2026-01-01T00:00:00.000Z')"));
  t.ok(db.dialect.isUniqueViolation(duplicate));
  t.notOk(isStorageFailure(duplicate), 'a refused constraint is a bug, not an outage');
});
