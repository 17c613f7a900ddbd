/**
 * @module Call records: every attempt, written at each state change (never per packet), read by
 * the list and detail endpoints and by recovery after a crash.
 */
import type { TenantId } from '../common/ids.js';
import type { CallRecord, CallRecordState, CallDirection } from '../engine/calls/call-record.js';
import type { SqlExecutor } from './sql/sql-database.js';
import { LiveCallIndex, type CallListItem } from './live-call-index.js';
import { KEYSET_SQL, keysetParams, toPage, type Page, type PageRequest } from './page.js';

export type { CallDirection, CallRecord, CallRecordState } from '../engine/calls/call-record.js';

type Row = Omit<CallRecord, 'on_hold' | 'record' | 'caller_privacy' | 'quality' | 'caller_identity_header' | 'sip_headers'> & {
  on_hold: number; record: number; caller_privacy: number; quality: string | null; caller_identity_header: number; sip_headers: string | null;
};
const fromRecord = (c: CallRecord): Row => ({
  ...c, on_hold: c.on_hold ? 1 : 0, record: c.record ? 1 : 0, caller_privacy: c.caller_privacy ? 1 : 0, caller_identity_header: c.caller_identity_header ? 1 : 0,
  quality: c.quality ? JSON.stringify(c.quality) : null, sip_headers: c.sip_headers ? JSON.stringify(c.sip_headers) : null,
});

const COLUMNS = [
  'id', 'tenant_id', 'call_control_id', 'direction', 'state', 'on_hold', 'from_number', 'to_number', 'carrier', 'record',
  'caller_privacy', 'agent_type', 'agent_url', 'agent_id', 'created_at', 'ringing_at', 'answered_at', 'ended_at', 'end_reason', 'sip_status',
  'hangup_by', 'transfer_to', 'transfer_state', 'transfer_started_at', 'conversation_id', 'recording_path', 'quality', 'caller_verstat', 'caller_identity_header',
  'amd_result', 'amd_decided_after_ms', 'amd_beep_at_ms', 'sip_headers',
] as const satisfies readonly (keyof CallRecord)[];
const SELECT = `SELECT ${COLUMNS.join(', ')} FROM calls`;

/**
 * Rows are read as arrays (the port's `values`: better-sqlite3's raw mode) and named here: the driver builds row
 * objects one property at a time through V8's API, which took more than half of a 50-call list
 * page (1.1 ms against 2.3 ms for 51 rows, measured interleaved). The columns are SELECTed by name
 * in COLUMNS order, so position i is COLUMNS[i].
 */
function toRecord(values: unknown[]): CallRecord {
  const record: Record<string, unknown> = {};
  for (let i = 0; i < COLUMNS.length; i++) record[COLUMNS[i]!] = values[i];
  record.on_hold = record.on_hold === 1;
  record.record = record.record === 1;
  record.caller_privacy = record.caller_privacy === 1;
  record.quality = typeof record.quality === 'string' ? JSON.parse(record.quality) : null;
  record.caller_identity_header = record.caller_identity_header === 1;
  record.sip_headers = typeof record.sip_headers === 'string' ? JSON.parse(record.sip_headers) : null;
  return record as unknown as CallRecord;
}
const MUTABLE = COLUMNS.filter((c) => !['id', 'tenant_id', 'call_control_id', 'direction', 'created_at', 'sip_headers'].includes(c));
const INSERT_SQL = `INSERT INTO calls (${COLUMNS.join(', ')}, node_id) VALUES (${COLUMNS.map((c) => `@${c}`).join(', ')}, @node_id)`;
const SAVE_SQL = `UPDATE calls SET ${MUTABLE.map((c) => `${c} = @${c}`).join(', ')} WHERE tenant_id = @tenant_id AND id = @id`;

// Live calls are listed from memory (LiveCallIndex); calls ended since the live window began come
// from the ended_at range of calls_tenant_ended, sorted: one window of calls at most.
const ENDED_LIST_SQL = `${SELECT} WHERE tenant_id = @tenant_id AND ended_at >= @ended_since AND state = 'ended' `
  + `AND (CAST(@direction AS TEXT) IS NULL OR direction = @direction) AND (CAST(@carrier_is AS TEXT) IS NULL OR carrier = @carrier_is) `
  + `AND (CAST(@carrier_not AS TEXT) IS NULL OR carrier != @carrier_not) AND (CAST(@ended_before AS TEXT) IS NULL OR ended_at < @ended_before) `
  + `AND (CAST(@number AS TEXT) IS NULL OR from_number = @number OR to_number = @number) AND (CAST(@end_reason AS TEXT) IS NULL OR end_reason = @end_reason) `
  + `AND (CAST(@carrier AS TEXT) IS NULL OR carrier = @carrier) AND ${KEYSET_SQL} ORDER BY created_at DESC, id DESC LIMIT @limit`;

export interface CallListFilter {
  /** One state, or undefined for every live (not ended) call. */
  state?: CallRecordState;
  direction?: CallDirection;
  /** For `state: 'ended'`: only calls that ended at or after this time (all of them when absent). */
  endedSince?: string;
  /** For `state: 'ended'` (the history, docs/API.md "Call history"): ended before this time. */
  endedBefore?: string;
  /** For `state: 'ended'`: calls from or to this number. */
  number?: string;
  /** For `state: 'ended'`: calls that ended for this reason. */
  endReason?: string;
  /** For `state: 'ended'`: calls on this carrier, besides the key's scope. */
  carrierName?: string;
  /** Only calls on this carrier (`is`), or on any other (`isNot`): how sandbox and live keys see separate lists. */
  carrier?: CarrierFilter;
}

export type CarrierFilter = { is: string } | { isNot: string };

/** A live call's page as SQL reads it, for a process whose calls another process writes. */
const LIVE_LIST_SQL = `${SELECT} WHERE state != 'ended' AND tenant_id = @tenant_id AND (CAST(@state AS TEXT) IS NULL OR state = @state) `
  + `AND (CAST(@direction AS TEXT) IS NULL OR direction = @direction) AND (CAST(@carrier_is AS TEXT) IS NULL OR carrier = @carrier_is) `
  + `AND (CAST(@carrier_not AS TEXT) IS NULL OR carrier != @carrier_not) AND ${KEYSET_SQL} ORDER BY created_at DESC, id DESC LIMIT @limit`;

export interface CallRepositoryOptions {
  /** The engine whose calls this process writes: recorded on each new row (docs/ARCHITECTURE.md "Process roles"). */
  nodeId?: string;
  /**
   * Where the live list is read: `memory`, the index this process keeps (it writes every call);
   * `database`, SQL on the partial index of live calls, for an API process whose calls an
   * engine process writes; or a {@link LiveListSource} (docs/CLUSTER.md "Live state in Redis").
   */
  liveList?: 'memory' | 'database' | LiveListSource;
}

/**
 * The live list kept outside the database, for an API process of a cluster: a page in the same
 * order and cursor as SQL's, or undefined when the source cannot answer now, in which case the
 * page is read from SQL as with `database`.
 */
export interface LiveListSource {
  page(tenantId: TenantId, filter: { state?: Exclude<CallRecordState, 'ended'> | undefined; direction?: CallDirection | undefined; carrier?: CarrierFilter | undefined }, page: PageRequest): Promise<Page<CallListItem> | undefined>;
}

const carrierParams = (carrier: CarrierFilter | undefined) => ({
  carrier_is: carrier && 'is' in carrier ? carrier.is : null, carrier_not: carrier && 'isNot' in carrier ? carrier.isNot : null,
});

export class CallRepository {
  readonly #db: SqlExecutor;
  readonly #options: CallRepositoryOptions;
  /** Every live call, kept in step by insert and save: the list's live pages are read from it. */
  readonly #live: LiveCallIndex;

  /** Over `db`; `live` is shared by the repositories of one store (its transactions' included). */
  constructor(db: SqlExecutor, options: CallRepositoryOptions = {}, live = new LiveCallIndex()) {
    this.#db = db;
    this.#options = options;
    this.#live = live;
  }

  /** The same repository over a transaction (one live list for both). */
  over(tx: SqlExecutor): CallRepository {
    return new CallRepository(tx, this.#options, this.#live);
  }

  /**
   * Fills the live list from the database: run once when the store opens. One repository per
   * database in a process (one gateway per data folder): what is live in the file now is what the
   * index starts from. A process that reads the live list from SQL keeps no index.
   */
  async load(): Promise<void> {
    if (this.#options.liveList !== undefined && this.#options.liveList !== 'memory') return;
    for (const call of await this.unfinished()) this.#live.update(call);
  }

  /**
   * Writes a new call. Like {@link save}, it updates the in-memory live list once the statement
   * has run, so neither belongs inside a store transaction that may roll back (none does today):
   * the list would keep a change the file lost.
   */
  async insert(call: CallRecord): Promise<void> {
    await this.#db.run(INSERT_SQL, { ...fromRecord(call), node_id: this.#options.nodeId ?? null });
    this.#live.update(call);
  }

  /** Writes the mutable fields of a call (a state change, hold, transfer, end). */
  async save(call: CallRecord): Promise<void> {
    if ((await this.#db.run(SAVE_SQL, fromRecord(call))).changes > 0) this.#live.update(call);
  }

  async get(tenantId: TenantId, id: string): Promise<CallRecord | undefined> {
    const [row] = await this.#db.values(`${SELECT} WHERE tenant_id = ? AND id = ?`, [tenantId, id]);
    return row && toRecord(row);
  }

  async getByControlId(tenantId: TenantId, callControlId: string): Promise<CallRecord | undefined> {
    const [row] = await this.#db.values(`${SELECT} WHERE tenant_id = ? AND call_control_id = ?`, [tenantId, callControlId]);
    return row && toRecord(row);
  }

  /** A page of the list, newest first: live calls (any, or one live state) from memory, ended ones from the database. */
  async list(tenantId: TenantId, filter: CallListFilter, page: PageRequest): Promise<Page<CallListItem>> {
    const params = { tenant_id: tenantId, direction: filter.direction ?? null, ...carrierParams(filter.carrier), ...keysetParams(page.after), limit: page.limit + 1 };
    if (filter.state !== 'ended') {
      const source = this.#options.liveList;
      if (typeof source === 'object') {
        const fromSource = await source.page(tenantId, { state: filter.state, direction: filter.direction, carrier: filter.carrier }, page);
        if (fromSource) return fromSource;
      }
      if (source !== undefined && source !== 'memory') return toPage((await this.#db.values(LIVE_LIST_SQL, { ...params, state: filter.state ?? null })).map(toRecord), page.limit);
      return this.#live.page(tenantId, { state: filter.state, direction: filter.direction, carrier: filter.carrier }, page);
    }
    const history = {
      ended_since: filter.endedSince ?? '', ended_before: filter.endedBefore ?? null, number: filter.number ?? null,
      end_reason: filter.endReason ?? null, carrier: filter.carrierName ?? null,
    };
    return toPage((await this.#db.values(ENDED_LIST_SQL, { ...params, ...history })).map(toRecord), page.limit);
  }

  /**
   * Calls a crash left unfinished (every tenant's): recovery ends them at start-up. With a node
   * id, only that engine's, and those of rows from before calls named their node.
   */
  async unfinished(nodeId?: string): Promise<CallRecord[]> {
    const rows = nodeId === undefined
      ? await this.#db.values(`${SELECT} WHERE state != 'ended'`)
      : await this.#db.values(`${SELECT} WHERE state != 'ended' AND (node_id = ? OR node_id IS NULL)`, [nodeId]);
    return rows.map(toRecord);
  }

  /** The engine that owns a call (null for rows from before calls named their node), or undefined without such a call. */
  async ownerOf(tenantId: TenantId, id: string): Promise<string | null | undefined> {
    return (await this.#db.get<{ node_id: string | null }>('SELECT node_id FROM calls WHERE tenant_id = ? AND id = ?', [tenantId, id]))?.node_id;
  }

  /** {@link ownerOf} by the call's control id. */
  async ownerOfControlId(tenantId: TenantId, callControlId: string): Promise<string | null | undefined> {
    return (await this.#db.get<{ node_id: string | null }>('SELECT node_id FROM calls WHERE tenant_id = ? AND call_control_id = ?', [tenantId, callControlId]))?.node_id;
  }
}
