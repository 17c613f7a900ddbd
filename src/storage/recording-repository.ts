/** @module Recordings archived in the data folder: path, media type, size and SHA-256 per call and source. */
import type { Clock } from '../common/clock.js';
import type { TenantId } from '../common/ids.js';
import { isoNow } from '../common/time.js';
import type { SqlExecutor } from './sql/sql-database.js';

export type RecordingSource = 'provider' | 'gateway';

export interface RecordingRecord {
  call_id: string;
  tenant_id: TenantId;
  source: RecordingSource;
  /** Relative to the data folder (or absolute). */
  path: string;
  media_type: string;
  bytes: number;
  sha256: string;
  origin: 'inline' | 'download';
  created_at: string;
}

export class RecordingRepository {
  readonly #db: SqlExecutor;
  readonly #clock: Clock;

  constructor(db: SqlExecutor, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  /** Stores (or replaces) the recording of a call from one source, and points the call at it if it has none. */
  async save(recording: Omit<RecordingRecord, 'created_at'>): Promise<void> {
    await this.#db.run(
      `INSERT INTO recordings (call_id, tenant_id, source, path, media_type, bytes, sha256, origin, created_at)
       VALUES (@call_id, @tenant_id, @source, @path, @media_type, @bytes, @sha256, @origin, @created_at)
       ON CONFLICT (call_id, source) DO UPDATE SET path = excluded.path, media_type = excluded.media_type, bytes = excluded.bytes,
         sha256 = excluded.sha256, origin = excluded.origin, created_at = excluded.created_at`,
      { ...recording, created_at: isoNow(this.#clock) },
    );
    // The call detail's `recording.available` reads calls.recording_path: a provider copy fills it
    // only when the gateway recorded nothing itself, so the gateway's own recording always wins.
    await this.#db.run('UPDATE calls SET recording_path = ? WHERE tenant_id = ? AND id = ? AND recording_path IS NULL', [recording.path, recording.tenant_id, recording.call_id]);
  }

  async get(tenantId: TenantId, callId: string, source: RecordingSource): Promise<RecordingRecord | undefined> {
    const row = await this.#db.get<RecordingRecord>('SELECT * FROM recordings WHERE tenant_id = ? AND call_id = ? AND source = ?', [tenantId, callId, source]);
    return row && { ...row, bytes: Number(row.bytes) };
  }

  /** The archived recording stored at `path` for the call, if that path is one of ours. */
  async byPath(tenantId: TenantId, callId: string, path: string): Promise<RecordingRecord | undefined> {
    const row = await this.#db.get<RecordingRecord>('SELECT * FROM recordings WHERE tenant_id = ? AND call_id = ? AND path = ?', [tenantId, callId, path]);
    return row && { ...row, bytes: Number(row.bytes) };
  }
}
