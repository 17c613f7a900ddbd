/** @module Recordings archived in the data folder: path, media type, size and SHA-256 per call and source. */
import type { Clock } from '../common/clock.js';
import type { TenantId } from '../common/ids.js';
import { isoNow } from '../common/time.js';
import type { Db } from './database.js';

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
  readonly #clock: Clock;
  readonly #upsert;
  readonly #get;
  readonly #byPath;
  readonly #setCallPath;

  constructor(db: Db, clock: Clock) {
    this.#clock = clock;
    this.#upsert = db.prepare(
      `INSERT INTO recordings (call_id, tenant_id, source, path, media_type, bytes, sha256, origin, created_at)
       VALUES (@call_id, @tenant_id, @source, @path, @media_type, @bytes, @sha256, @origin, @created_at)
       ON CONFLICT (call_id, source) DO UPDATE SET path = excluded.path, media_type = excluded.media_type, bytes = excluded.bytes,
         sha256 = excluded.sha256, origin = excluded.origin, created_at = excluded.created_at`,
    );
    this.#get = db.prepare<[string, string, string], RecordingRecord>('SELECT * FROM recordings WHERE tenant_id = ? AND call_id = ? AND source = ?');
    this.#byPath = db.prepare<[string, string, string], RecordingRecord>('SELECT * FROM recordings WHERE tenant_id = ? AND call_id = ? AND path = ?');
    // The call detail's `recording.available` reads calls.recording_path: a provider copy fills it
    // only when the gateway recorded nothing itself, so the gateway's own recording always wins.
    this.#setCallPath = db.prepare<[string, string, string]>('UPDATE calls SET recording_path = ? WHERE tenant_id = ? AND id = ? AND recording_path IS NULL');
  }

  /** Stores (or replaces) the recording of a call from one source, and points the call at it if it has none. */
  save(recording: Omit<RecordingRecord, 'created_at'>): void {
    this.#upsert.run({ ...recording, created_at: isoNow(this.#clock) });
    this.#setCallPath.run(recording.path, recording.tenant_id, recording.call_id);
  }

  get(tenantId: TenantId, callId: string, source: RecordingSource): RecordingRecord | undefined {
    return this.#get.get(tenantId, callId, source);
  }

  /** The archived recording stored at `path` for the call, if that path is one of ours. */
  byPath(tenantId: TenantId, callId: string, path: string): RecordingRecord | undefined {
    return this.#byPath.get(tenantId, callId, path);
  }
}
