/**
 * @module The asynchronous SQL port every repository is written against (docs/ARCHITECTURE.md
 * "Storage"): a statement runs on the database or inside a transaction, and returns a Promise
 * whichever engine is behind it. Two adapters implement it: SQLite (better-sqlite3, the embedded
 * default) and PostgreSQL (`pg`, a shared store for several processes).
 *
 * Statements name their parameters `@name` (bound from an object) or use `?` (bound from an
 * array), as SQLite does; the PostgreSQL adapter rewrites both to `$n`. The SQL itself is kept to
 * what both engines read the same way; what differs is in {@link SqlDialect}.
 */

/** Parameters of one statement: an array for `?` placeholders, an object for `@name` ones. */
export type SqlParams = readonly unknown[] | object;

export interface SqlRunResult {
  /** Rows the statement inserted, changed or deleted. */
  changes: number;
}

/** Where the SQL that engines spell differently is looked up. */
export interface SqlDialect {
  readonly name: 'sqlite' | 'postgres';
  /** A unique or primary-key constraint refused the statement (another writer got there first). */
  isUniqueViolation(err: unknown): boolean;
}

/** Runs statements: on the database (each on its own) or inside one transaction. */
export interface SqlExecutor {
  readonly dialect: SqlDialect;
  all<T>(sql: string, params?: SqlParams): Promise<T[]>;
  get<T>(sql: string, params?: SqlParams): Promise<T | undefined>;
  /**
   * Rows as arrays of column values in SELECT order: cheaper than objects where an adapter can
   * skip building them (better-sqlite3's raw mode, `pg`'s array row mode).
   */
  values(sql: string, params?: SqlParams): Promise<unknown[][]>;
  run(sql: string, params?: SqlParams): Promise<SqlRunResult>;
  /** Several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
  /**
   * Runs `fn` in one transaction: committed when its Promise resolves, rolled back when it
   * rejects. Every statement of the transaction goes through `tx`; inside a transaction this
   * opens a savepoint.
   */
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
}

export interface SqlDatabase extends SqlExecutor {
  close(): Promise<void>;
}

/** A PostgreSQL URL (`postgres://` or `postgresql://`); anything else is an SQLite file. */
export const isPostgresUrl = (location: string): boolean => /^postgres(ql)?:\/\//i.test(location);

/** The URL with its password masked, for logs and errors. */
export function redactDatabaseUrl(location: string): string {
  if (!isPostgresUrl(location)) return location;
  try {
    const url = new URL(location);
    if (url.password !== '') url.password = '***';
    return url.toString();
  } catch {
    return 'postgres://(unparseable URL)';
  }
}
