/**
 * @module The SQL port over better-sqlite3 (docs/ARCHITECTURE.md "Storage"). better-sqlite3 is
 * synchronous: a statement runs when it is issued and its Promise is already settled, so the
 * embedded mode costs what it did before the port was asynchronous. The one connection is shared,
 * so an asynchronous transaction holds a {@link FifoLock} from BEGIN to COMMIT: statements issued
 * meanwhile by others wait for it instead of running inside it.
 */
import type Database from 'better-sqlite3';
import { FifoLock } from './fifo-lock.js';
import type { SqlDatabase, SqlDialect, SqlExecutor, SqlParams, SqlRunResult } from './sql-database.js';

const SQLITE_DIALECT: SqlDialect = {
  name: 'sqlite',
  isUniqueViolation: (err) => {
    const code = (err as { code?: unknown } | null)?.code;
    return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
  },
};

/** Statements prepared once per SQL text (and per row mode), as the repositories did themselves. */
class StatementCache {
  readonly #db: Database.Database;
  readonly #objects = new Map<string, Database.Statement>();
  readonly #arrays = new Map<string, Database.Statement>();

  constructor(db: Database.Database) {
    this.#db = db;
  }

  objects(sql: string): Database.Statement {
    let statement = this.#objects.get(sql);
    if (!statement) this.#objects.set(sql, (statement = this.#db.prepare(sql)));
    return statement;
  }

  arrays(sql: string): Database.Statement {
    let statement = this.#arrays.get(sql);
    if (!statement) this.#arrays.set(sql, (statement = this.#db.prepare(sql).raw(true)));
    return statement;
  }
}

const bind = (params: SqlParams | undefined): unknown[] => (params === undefined ? [] : Array.isArray(params) ? params : [params]);

/** Runs statements synchronously on the connection; `guard` decides when (now, or after the lock). */
class SqliteExecutor implements SqlExecutor {
  readonly dialect = SQLITE_DIALECT;
  protected readonly connection: Database.Database;
  readonly #cache: StatementCache;
  readonly #depth: number;
  #active = true;

  constructor(connection: Database.Database, cache: StatementCache, depth: number) {
    this.connection = connection;
    this.#cache = cache;
    this.#depth = depth;
  }

  all<T>(sql: string, params?: SqlParams): Promise<T[]> {
    return this.guard(() => this.#cache.objects(sql).all(...bind(params)) as T[]);
  }

  get<T>(sql: string, params?: SqlParams): Promise<T | undefined> {
    return this.guard(() => this.#cache.objects(sql).get(...bind(params)) as T | undefined);
  }

  values(sql: string, params?: SqlParams): Promise<unknown[][]> {
    return this.guard(() => this.#cache.arrays(sql).all(...bind(params)) as unknown[][]);
  }

  run(sql: string, params?: SqlParams): Promise<SqlRunResult> {
    return this.guard(() => ({ changes: this.#cache.objects(sql).run(...bind(params)).changes }));
  }

  exec(sql: string): Promise<void> {
    return this.guard(() => {
      this.connection.exec(sql);
    });
  }

  /** Inside a transaction: a savepoint, released or rolled back with `fn`'s outcome. */
  async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    this.#check();
    const name = `sp${this.#depth}`;
    this.connection.exec(`SAVEPOINT ${name}`);
    return this.runInside(fn, `RELEASE ${name}`, `ROLLBACK TO ${name}; RELEASE ${name}`);
  }

  protected guard<T>(work: () => T): Promise<T> {
    try {
      this.#check();
      return Promise.resolve(work());
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }

  protected async runInside<T>(fn: (tx: SqlExecutor) => Promise<T>, commit: string, rollback: string): Promise<T> {
    const tx = new SqliteExecutor(this.connection, this.#cache, this.#depth + 1);
    try {
      const result = await fn(tx);
      this.connection.exec(commit);
      return result;
    } catch (err) {
      // A failed COMMIT (SQLITE_BUSY) leaves the transaction open: roll it back too.
      if (this.connection.inTransaction) this.connection.exec(rollback);
      throw err;
    } finally {
      tx.#active = false;
    }
  }

  #check(): void {
    if (!this.#active) throw new Error('statement issued on a transaction that has ended');
  }
}

export class SqliteDatabase extends SqliteExecutor implements SqlDatabase {
  /** The better-sqlite3 handle, for SQLite-only work (pragmas, tests that read the file). */
  readonly sqlite: Database.Database;
  readonly #lock = new FifoLock();

  constructor(connection: Database.Database) {
    super(connection, new StatementCache(connection), 0);
    this.sqlite = connection;
  }

  /** One IMMEDIATE transaction (it takes the write lock at BEGIN, so its reads and writes see one state). */
  override async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    await this.#lock.acquire();
    try {
      this.connection.exec('BEGIN IMMEDIATE');
      return await this.runInside(fn, 'COMMIT', 'ROLLBACK');
    } finally {
      this.#lock.release();
    }
  }

  close(): Promise<void> {
    return this.#lock.run(() => {
      this.connection.close();
    });
  }

  protected override guard<T>(work: () => T): Promise<T> {
    return this.#lock.run(work);
  }
}
