/** @module Call transcripts, one per source: the provider's (post-call webhook) and the gateway's own. */
import type { Clock } from '../common/clock.js';
import type { TenantId } from '../common/ids.js';
import { isoNow } from '../common/time.js';
import type { Db } from './database.js';

export type TranscriptSource = 'provider' | 'gateway';

export interface TranscriptTurn {
  role: 'caller' | 'agent';
  text: string;
  offset_s: number;
}

export class TranscriptRepository {
  readonly #clock: Clock;
  readonly #upsert;
  readonly #sources;
  readonly #get;

  constructor(db: Db, clock: Clock) {
    this.#clock = clock;
    this.#upsert = db.prepare(
      `INSERT INTO transcripts (call_id, source, turns_json, created_at) VALUES (@call_id, @source, @turns_json, @created_at)
       ON CONFLICT (call_id, source) DO UPDATE SET turns_json = excluded.turns_json, created_at = excluded.created_at`,
    );
    // Joined to calls so a transcript is only ever read through its tenant's call.
    this.#sources = db.prepare<[string, string], { source: TranscriptSource }>(
      `SELECT t.source FROM transcripts t JOIN calls c ON c.id = t.call_id WHERE c.tenant_id = ? AND t.call_id = ? ORDER BY t.source DESC`,
    );
    this.#get = db.prepare<[string, string, string], { turns_json: string }>(
      `SELECT t.turns_json FROM transcripts t JOIN calls c ON c.id = t.call_id WHERE c.tenant_id = ? AND t.call_id = ? AND t.source = ?`,
    );
  }

  save(callId: string, source: TranscriptSource, turns: TranscriptTurn[]): void {
    this.#upsert.run({ call_id: callId, source, turns_json: JSON.stringify(turns), created_at: isoNow(this.#clock) });
  }

  /** Sources with a stored transcript, the provider's first (it is the fuller one). */
  sources(tenantId: TenantId, callId: string): TranscriptSource[] {
    return this.#sources.all(tenantId, callId).map((r) => r.source);
  }

  get(tenantId: TenantId, callId: string, source: TranscriptSource): TranscriptTurn[] | undefined {
    const row = this.#get.get(tenantId, callId, source);
    return row ? (JSON.parse(row.turns_json) as TranscriptTurn[]) : undefined;
  }
}
