/**
 * @module The engines that run on this database (docs/ARCHITECTURE.md "Process roles"): each
 * registers its internal command endpoint and refreshes its row every few seconds; an API process
 * sends a call's commands to the engine named in the call row, and a new call to a live engine.
 */
import type { Clock } from '../common/clock.js';
import { isoNow } from '../common/time.js';
import type { SqlExecutor } from './sql/sql-database.js';

export interface NodeRecord {
  id: string;
  /** The engine's internal command endpoint, e.g. `http://127.0.0.1:8090`. */
  internal_url: string;
  /** The calls it carried at its last refresh. */
  live_calls: number;
  started_at: string;
  /** When it last refreshed its row (epoch milliseconds, the engine's clock). */
  last_seen_ms: number;
  /** 1 once the engine drains: no new call goes to it. */
  draining: number;
}

export class NodeRepository {
  readonly #db: SqlExecutor;
  readonly #clock: Clock;

  constructor(db: SqlExecutor, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  /** Registers (or re-registers, after a restart) an engine as seen now. */
  async register(node: { id: string; internalUrl: string; liveCalls: number }): Promise<void> {
    const now = this.#clock.now();
    await this.#db.run(
      `INSERT INTO nodes (id, internal_url, live_calls, started_at, last_seen_ms) VALUES (@id, @internal_url, @live_calls, @started_at, @last_seen_ms)
       ON CONFLICT (id) DO UPDATE SET internal_url = excluded.internal_url, live_calls = excluded.live_calls,
         started_at = excluded.started_at, last_seen_ms = excluded.last_seen_ms, draining = 0`,
      { id: node.id, internal_url: node.internalUrl, live_calls: node.liveCalls, started_at: isoNow(this.#clock), last_seen_ms: now },
    );
  }

  /** The engine is alive now and carries `liveCalls`; false when its row is gone (then register again). */
  async refresh(id: string, liveCalls: number): Promise<boolean> {
    return (await this.#db.run('UPDATE nodes SET live_calls = ?, last_seen_ms = ? WHERE id = ?', [liveCalls, this.#clock.now(), id])).changes > 0;
  }

  async get(id: string): Promise<NodeRecord | undefined> {
    const row = await this.#db.get<NodeRecord>('SELECT * FROM nodes WHERE id = ?', [id]);
    return row && toRecord(row);
  }

  /** Engines that refreshed their row within `withinMs` of now and are not draining, by id: where new calls may go. */
  async live(withinMs: number): Promise<NodeRecord[]> {
    return (await this.#db.all<NodeRecord>('SELECT * FROM nodes WHERE last_seen_ms >= ? AND draining = 0 ORDER BY id', [this.#clock.now() - withinMs])).map(toRecord);
  }

  /** The engine drains: it keeps its row (commands on its calls still reach it) but takes no new call. */
  async drain(id: string): Promise<void> {
    await this.#db.run('UPDATE nodes SET draining = 1 WHERE id = ?', [id]);
  }

  /** An engine that has stopped says so. */
  async remove(id: string): Promise<void> {
    await this.#db.run('DELETE FROM nodes WHERE id = ?', [id]);
  }
}

/** PostgreSQL returns BIGINT columns as numbers here (the adapter's type parser); both engines give numbers. */
const toRecord = (row: NodeRecord): NodeRecord => ({ ...row, live_calls: Number(row.live_calls), last_seen_ms: Number(row.last_seen_ms), draining: Number(row.draining) });
