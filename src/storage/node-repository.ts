/**
 * @module The engines that run on this database (docs/ARCHITECTURE.md "Process roles"): each
 * registers its internal command endpoint and refreshes its row every few seconds; an API process
 * sends a call's commands to the engine named in the call row, and a new call to a live engine.
 */
import type { Clock } from '../common/clock.js';
import { isoNow } from '../common/time.js';
import type { Db } from './database.js';

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
  readonly #clock: Clock;
  readonly #upsert;
  readonly #refresh;
  readonly #get;
  readonly #seenSince;
  readonly #remove;
  readonly #drain;

  constructor(db: Db, clock: Clock) {
    this.#clock = clock;
    this.#upsert = db.prepare(
      `INSERT INTO nodes (id, internal_url, live_calls, started_at, last_seen_ms) VALUES (@id, @internal_url, @live_calls, @started_at, @last_seen_ms)
       ON CONFLICT (id) DO UPDATE SET internal_url = excluded.internal_url, live_calls = excluded.live_calls,
         started_at = excluded.started_at, last_seen_ms = excluded.last_seen_ms, draining = 0`,
    );
    this.#refresh = db.prepare<[number, number, string]>('UPDATE nodes SET live_calls = ?, last_seen_ms = ? WHERE id = ?');
    this.#get = db.prepare<[string], NodeRecord>('SELECT * FROM nodes WHERE id = ?');
    this.#seenSince = db.prepare<[number], NodeRecord>('SELECT * FROM nodes WHERE last_seen_ms >= ? AND draining = 0 ORDER BY id');
    this.#drain = db.prepare<[string]>('UPDATE nodes SET draining = 1 WHERE id = ?');
    this.#remove = db.prepare<[string]>('DELETE FROM nodes WHERE id = ?');
  }

  /** Registers (or re-registers, after a restart) an engine as seen now. */
  register(node: { id: string; internalUrl: string; liveCalls: number }): void {
    const now = this.#clock.now();
    this.#upsert.run({ id: node.id, internal_url: node.internalUrl, live_calls: node.liveCalls, started_at: isoNow(this.#clock), last_seen_ms: now });
  }

  /** The engine is alive now and carries `liveCalls`; false when its row is gone (then register again). */
  refresh(id: string, liveCalls: number): boolean {
    return this.#refresh.run(liveCalls, this.#clock.now(), id).changes > 0;
  }

  get(id: string): NodeRecord | undefined {
    return this.#get.get(id);
  }

  /** Engines that refreshed their row within `withinMs` of now and are not draining, by id: where new calls may go. */
  live(withinMs: number): NodeRecord[] {
    return this.#seenSince.all(this.#clock.now() - withinMs);
  }

  /** The engine drains: it keeps its row (commands on its calls still reach it) but takes no new call. */
  drain(id: string): void {
    this.#drain.run(id);
  }

  /** An engine that has stopped says so. */
  remove(id: string): void {
    this.#remove.run(id);
  }
}
