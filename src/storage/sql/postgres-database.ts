/**
 * @module The SQL port over PostgreSQL (`pg`, a connection pool), the store several gateway
 * processes share (docs/ARCHITECTURE.md "Storage"). Statements are written once for both engines:
 * `@name` and `?` placeholders are rewritten to `$n` here, once per SQL text. A transaction takes
 * one connection from the pool for its whole life; statements outside it run on any free one.
 */
import pg from 'pg';
import { translatePlaceholders, type CompiledStatement } from './placeholders.js';
import type { SqlDatabase, SqlDialect, SqlExecutor, SqlParams, SqlRunResult } from './sql-database.js';
import { redactDatabaseUrl } from './sql-database.js';
import { migratePostgres } from './postgres-migrations.js';

// BIGINT (count(*), sums, epoch milliseconds) as a JavaScript number, as SQLite gives it: every
// such value here is far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

/** SQLSTATE 23505 unique_violation. */
const POSTGRES_DIALECT: SqlDialect = {
  name: 'postgres',
  isUniqueViolation: (err) => (err as { code?: unknown } | null)?.code === '23505',
};

type Queryable = Pick<pg.Pool, 'query'> | Pick<pg.PoolClient, 'query'>;

class Compiler {
  readonly #cache = new Map<string, CompiledStatement>();

  compile(sql: string): CompiledStatement {
    let compiled = this.#cache.get(sql);
    if (!compiled) this.#cache.set(sql, (compiled = translatePlaceholders(sql)));
    return compiled;
  }
}

class PostgresExecutor implements SqlExecutor {
  readonly dialect = POSTGRES_DIALECT;
  readonly #target: Queryable;
  readonly #compiler: Compiler;
  readonly #depth: number;

  constructor(target: Queryable, compiler: Compiler, depth: number) {
    this.#target = target;
    this.#compiler = compiler;
    this.#depth = depth;
  }

  async all<T>(sql: string, params?: SqlParams): Promise<T[]> {
    return (await this.#target.query(this.#query(sql, params))).rows as T[];
  }

  async get<T>(sql: string, params?: SqlParams): Promise<T | undefined> {
    return (await this.#target.query(this.#query(sql, params))).rows[0] as T | undefined;
  }

  async values(sql: string, params?: SqlParams): Promise<unknown[][]> {
    return (await this.#target.query({ ...this.#query(sql, params), rowMode: 'array' })).rows as unknown[][];
  }

  async run(sql: string, params?: SqlParams): Promise<SqlRunResult> {
    return { changes: (await this.#target.query(this.#query(sql, params))).rowCount ?? 0 };
  }

  async exec(sql: string): Promise<void> {
    await this.#target.query(sql);
  }

  /** Inside a transaction: a savepoint. */
  async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    const name = `sp${this.#depth}`;
    await this.#target.query(`SAVEPOINT ${name}`);
    try {
      const result = await fn(new PostgresExecutor(this.#target, this.#compiler, this.#depth + 1));
      await this.#target.query(`RELEASE SAVEPOINT ${name}`);
      return result;
    } catch (err) {
      await this.#target.query(`ROLLBACK TO SAVEPOINT ${name}`);
      throw err;
    }
  }

  #query(sql: string, params: SqlParams | undefined): pg.QueryConfig {
    const compiled = this.#compiler.compile(sql);
    return { text: compiled.text, values: compiled.bind(params) };
  }
}

export class PostgresDatabase extends PostgresExecutor implements SqlDatabase {
  readonly #pool: pg.Pool;
  readonly #compiler: Compiler;

  constructor(pool: pg.Pool, compiler = new Compiler()) {
    super(pool, compiler, 0);
    this.#pool = pool;
    this.#compiler = compiler;
  }

  /** One transaction on one pooled connection (READ COMMITTED; unique constraints decide races). */
  override async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    const client = await this.#pool.connect();
    let broken: unknown = undefined;
    // A checked-out connection the server ends between statements (a restart, an administrator)
    // reports it as an 'error' event: without a listener that would end the process. The next
    // statement of the transaction then fails, and the connection is dropped, not reused.
    const lost = (err: Error): void => { broken = err; };
    client.on('error', lost);
    try {
      await client.query('BEGIN');
      const result = await fn(new PostgresExecutor(client, this.#compiler, 1));
      await client.query('COMMIT');
      return result;
    } catch (err) {
      try {
        await client.query('ROLLBACK');
      } catch (rollbackError) {
        broken = rollbackError;
      }
      throw err;
    } finally {
      client.off('error', lost);
      // A connection that could not even roll back is dropped from the pool, not reused.
      client.release(broken instanceof Error ? broken : undefined);
    }
  }

  close(): Promise<void> {
    return this.#pool.end();
  }
}

export interface PostgresOptions {
  /** Connections in the pool (default 10). */
  poolSize?: number;
}

/** Connects to `url`, applies the migrations (under an advisory lock) and returns the port. */
export async function openPostgresDatabase(url: string, options: PostgresOptions = {}): Promise<PostgresDatabase> {
  const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 10 });
  // An idle connection the server closed reports here; the pool replaces it. Without a listener
  // the error would end the process.
  pool.on('error', () => undefined);
  const db = new PostgresDatabase(pool);
  try {
    await migratePostgres(db);
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw new Error(`cannot open the PostgreSQL database ${redactDatabaseUrl(url)}: ${(err as Error).message}`, { cause: err });
  }
  return db;
}
