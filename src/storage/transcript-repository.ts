/** @module Call transcripts, one per source: the provider's (post-call webhook) and the gateway's own. */
import type { Clock } from '../common/clock.js';
import type { TenantId } from '../common/ids.js';
import { isoNow } from '../common/time.js';
import type { SqlExecutor } from './sql/sql-database.js';

export type TranscriptSource = 'provider' | 'gateway';

export interface TranscriptTurn {
  role: 'caller' | 'agent';
  text: string;
  offset_s: number;
}

export class TranscriptRepository {
  readonly #db: SqlExecutor;
  readonly #clock: Clock;

  constructor(db: SqlExecutor, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  async save(callId: string, source: TranscriptSource, turns: TranscriptTurn[]): Promise<void> {
    await this.#db.run(
      `INSERT INTO transcripts (call_id, source, turns_json, created_at) VALUES (@call_id, @source, @turns_json, @created_at)
       ON CONFLICT (call_id, source) DO UPDATE SET turns_json = excluded.turns_json, created_at = excluded.created_at`,
      { call_id: callId, source, turns_json: JSON.stringify(turns), created_at: isoNow(this.#clock) },
    );
  }

  /** Sources with a stored transcript, the provider's first (it is the fuller one). */
  async sources(tenantId: TenantId, callId: string): Promise<TranscriptSource[]> {
    // Joined to calls so a transcript is only ever read through its tenant's call.
    const rows = await this.#db.all<{ source: TranscriptSource }>(
      'SELECT t.source FROM transcripts t JOIN calls c ON c.id = t.call_id WHERE c.tenant_id = ? AND t.call_id = ? ORDER BY t.source DESC', [tenantId, callId],
    );
    return rows.map((r) => r.source);
  }

  async get(tenantId: TenantId, callId: string, source: TranscriptSource): Promise<TranscriptTurn[] | undefined> {
    const row = await this.#db.get<{ turns_json: string }>(
      'SELECT t.turns_json FROM transcripts t JOIN calls c ON c.id = t.call_id WHERE c.tenant_id = ? AND t.call_id = ? AND t.source = ?', [tenantId, callId, source],
    );
    return row ? (JSON.parse(row.turns_json) as TranscriptTurn[]) : undefined;
  }
}
