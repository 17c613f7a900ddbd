/** @module SIP traces of ended calls (docs/API.md "SIP trace of a call"): one JSON document per call, read by its tenant only. */
import type { TenantId } from '../common/ids.js';
import type { SqlExecutor } from './sql/sql-database.js';

/** One SIP message as kept: masked text, with where and when it went. */
export interface SipTraceMessage {
  /** Wall-clock time, ISO 8601 with milliseconds. */
  at: string;
  direction: 'received' | 'sent';
  transport: 'UDP' | 'TCP' | 'TLS';
  /** `address:port` (IPv6 in brackets). */
  source: string;
  destination: string;
  sip_call_id: string;
  leg: 'carrier' | 'agent' | 'transfer_target';
  /** The message as on the wire, SDP crypto keys and digest responses masked. */
  text: string;
}

export interface SipTraceRecord {
  legs: { leg: SipTraceMessage['leg']; sip_call_id: string }[];
  messages: SipTraceMessage[];
  /** Oldest messages left out to keep the trace within its size cap (the tail is kept). */
  dropped_messages: number;
}

export class SipTraceRepository {
  readonly #db: SqlExecutor;

  constructor(db: SqlExecutor) {
    this.#db = db;
  }

  async save(tenantId: TenantId, callId: string, createdAt: string, trace: SipTraceRecord): Promise<void> {
    await this.#db.run(
      `INSERT INTO sip_traces (tenant_id, call_id, created_at, trace_json) VALUES (?, ?, ?, ?)
       ON CONFLICT (tenant_id, call_id) DO UPDATE SET created_at = excluded.created_at, trace_json = excluded.trace_json`,
      [tenantId, callId, createdAt, JSON.stringify(trace)],
    );
  }

  async get(tenantId: TenantId, callId: string): Promise<SipTraceRecord | undefined> {
    const row = await this.#db.get<{ trace_json: string }>('SELECT trace_json FROM sip_traces WHERE tenant_id = ? AND call_id = ?', [tenantId, callId]);
    return row ? (JSON.parse(row.trace_json) as SipTraceRecord) : undefined;
  }

  /** Deletes traces written before `before` (ISO time); returns how many. */
  async expire(before: string): Promise<number> {
    return (await this.#db.run('DELETE FROM sip_traces WHERE created_at < ?', [before])).changes;
  }
}
