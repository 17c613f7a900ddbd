/** @module SIP traces of ended calls (docs/API.md "SIP trace of a call"): one JSON document per call, read by its tenant only. */
import type { TenantId } from '../common/ids.js';
import type { Db } from './database.js';

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
  readonly #put;
  readonly #get;
  readonly #expire;

  constructor(db: Db) {
    this.#put = db.prepare(`INSERT OR REPLACE INTO sip_traces (tenant_id, call_id, created_at, trace_json) VALUES (?, ?, ?, ?)`);
    this.#get = db.prepare<[string, string], { trace_json: string }>(`SELECT trace_json FROM sip_traces WHERE tenant_id = ? AND call_id = ?`);
    this.#expire = db.prepare(`DELETE FROM sip_traces WHERE created_at < ?`);
  }

  save(tenantId: TenantId, callId: string, createdAt: string, trace: SipTraceRecord): void {
    this.#put.run(tenantId, callId, createdAt, JSON.stringify(trace));
  }

  get(tenantId: TenantId, callId: string): SipTraceRecord | undefined {
    const row = this.#get.get(tenantId, callId);
    return row ? (JSON.parse(row.trace_json) as SipTraceRecord) : undefined;
  }

  /** Deletes traces written before `before` (ISO time); returns how many. */
  expire(before: string): number {
    return this.#expire.run(before).changes;
  }
}
