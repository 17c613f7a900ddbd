/**
 * @module The engine's call store (the `CallRecordStore` port) over the calls and transcripts
 * repositories, for a database that may refuse writes: a lock held by another process past
 * `storage.busy_timeout_ms`, a full disk (docs/RELIABILITY.md, storage failures and the CDR
 * journal). Ending a call never waits for the database: a final record it refuses goes to the
 * CDR journal (durable) and a refused change of a live call is kept in memory; both are written
 * again every `storage.retry_seconds`, and the journal is replayed at start. While writes fail,
 * new ones are not tried (each would hold the event loop for the busy time-out): the retry probes.
 *
 * The repositories are asynchronous (docs/ARCHITECTURE.md "Storage"): the call layer never waits
 * for a change or a final record. They go into one queue, written in the order the calls made
 * them, so two changes of a call cannot overtake each other on a pool of connections.
 *
 * Each write also appends the call events the change causes (docs/EVENTS.md "Event types") to the
 * outbox in the same transaction, derived from the record as stored before it; once committed
 * they are handed to `onEvents` (the live stream's bus). docs/DECISIONS.md "Call events: the outbox".
 */
import type { Clock, TimerHandle } from '../common/clock.js';
import type { TenantId } from '../common/ids.js';
import type { Logger } from '../common/logger.js';
import { isStorageFailure } from '../common/storage-failure.js';
import type { CallRecord } from '../engine/calls/call-record.js';
import type { CallHappening, CallOutcome, CallRecordStore } from '../engine/calls/ports.js';
import type { CallRepository } from './call-repository.js';
import type { CdrJournal, CdrJournalEntry } from './cdr-journal.js';
import type { TranscriptRepository } from './transcript-repository.js';
import type { AppendedEvent, EventRepository } from './event-repository.js';
import { callEvents, happeningEvent } from './call-events.js';

/** What one write of a call goes through: the repositories of one transaction. */
export interface CallWriteTx {
  calls: CallRepository;
  transcripts: Pick<TranscriptRepository, 'save'>;
  events: Pick<EventRepository, 'append'>;
}

export interface DurableCallStoreOptions {
  calls: CallRepository;
  transcripts: Pick<TranscriptRepository, 'save'>;
  /** Runs `fn` in one transaction (the store's), over the repositories it is given. */
  transaction<T>(fn: (tx: CallWriteTx) => Promise<T>): Promise<T>;
  /** Events just committed with a call's change (the live stream's bus); never throws into the store. */
  onEvents?: (events: AppendedEvent[]) => void;
  journal: CdrJournal;
  clock: Clock;
  logger: Logger;
  /** How often refused writes are tried again. */
  retryMs: number;
}

export class DurableCallStore implements CallRecordStore {
  readonly #o: DurableCallStoreOptions;
  /** Final records the database refused, by call id: in the journal too (unless the disk refused that as well). */
  readonly #finals = new Map<string, CdrJournalEntry>();
  /**
   * Final records the database rejected for another reason than an outage (a constraint: a bug):
   * kept in the journal for the operator, never retried, so one cannot hold back the others.
   */
  readonly #rejected = new Map<string, CdrJournalEntry>();
  /** The latest refused change of each live call; a later write of the call supersedes it. */
  readonly #changes = new Map<string, CallRecord>();
  /** A write failed and none has succeeded since: writes queue up, and only the retry probes. */
  #failing = false;
  #timer: TimerHandle | null = null;
  #stopped = false;
  /** Writes run one at a time, in order: the end of the queue, and how many are in it. */
  #tail: Promise<unknown> = Promise.resolve();
  #queued = 0;

  constructor(options: DurableCallStoreOptions) {
    this.#o = options;
  }

  /** Final records waiting to be written (journal entries not yet in the database). */
  get pendingFinals(): number {
    return this.#finals.size;
  }

  /** Whether the last write attempt failed. */
  get isFailing(): boolean {
    return this.#failing;
  }

  /** Resolves once every write asked for so far has been tried. */
  async settled(): Promise<void> {
    while (this.#queued > 0) await this.#tail.then(() => undefined, () => undefined);
  }

  /**
   * Loads the journal a previous run left and writes it into the database (run before recovery,
   * so a call whose final record waits there is not taken for one a crash left unfinished).
   */
  async replayJournal(): Promise<number> {
    const { entries, skipped } = this.#o.journal.read();
    if (skipped > 0) this.#o.logger.error({ skipped, journal: this.#o.journal.path }, 'CDR journal lines that cannot be read were skipped');
    for (const entry of entries) this.#finals.set(entry.call.id, entry);
    if (entries.length === 0) return 0;
    this.#o.logger.info({ calls: this.#finals.size }, 'replaying the CDR journal');
    this.#failing = true;
    await this.retry();
    return entries.length;
  }

  /** Rejects when the database refuses the call: a call that cannot be recorded is not placed. */
  async insert(call: CallRecord): Promise<void> {
    this.#committed(await this.#o.transaction(async (tx) => {
      const events = await tx.events.append(call.tenant_id, callEvents(undefined, call));
      await tx.calls.insert(call);
      return events;
    }));
  }

  save(call: CallRecord): void {
    if (this.#finals.has(call.id)) return;
    if (this.#failing) return this.#keepChange(call);
    void this.#serial(async () => {
      if (this.#failing || this.#finals.has(call.id)) {
        if (!this.#finals.has(call.id)) this.#keepChange(call);
        return;
      }
      try {
        await this.#saveChange(call);
        this.#changes.delete(call.id);
      } catch (err) {
        if (!isStorageFailure(err)) {
          this.#o.logger.error({ err, call_id: call.id }, 'the database rejected a change of a call');
          return;
        }
        this.#refused(err);
        this.#keepChange(call);
      }
    });
  }

  /**
   * An event of a live call that changes nothing stored, queued behind the call's changes so it
   * follows them (a digit after `call.answered`). It is not kept while the database refuses
   * writes: it tells of a moment, and the call's record, which is kept, does not need it.
   */
  note(call: CallRecord, happening: CallHappening): void {
    const event = happeningEvent(call, happening);
    const dropped = (err: unknown): void => this.#o.logger.warn({ err, call_id: call.id, type: event.type }, 'a call event was not recorded: the database refused it');
    if (this.#failing) return dropped(null);
    void this.#serial(async () => {
      if (this.#failing) return dropped(null);
      try {
        this.#committed(await this.#o.transaction((tx) => tx.events.append(call.tenant_id, [event])));
      } catch (err) {
        dropped(err);
      }
    });
  }

  finish(outcome: CallOutcome): void {
    const entry: CdrJournalEntry = { call: outcome.call, transcripts: outcome.transcripts };
    this.#changes.delete(entry.call.id);
    if (this.#failing) return this.#keepFinal(entry, this.#finals);
    void this.#serial(async () => {
      if (this.#failing) return this.#keepFinal(entry, this.#finals);
      try {
        await this.#write(entry);
      } catch (err) {
        if (isStorageFailure(err)) {
          this.#refused(err);
          this.#keepFinal(entry, this.#finals);
        } else {
          this.#keepFinal(entry, this.#reject(entry, err));
        }
      }
    });
  }

  get(tenantId: TenantId, id: string): Promise<CallRecord | undefined> {
    return this.#o.calls.get(tenantId, id);
  }

  getByControlId(tenantId: TenantId, callControlId: string): Promise<CallRecord | undefined> {
    return this.#o.calls.getByControlId(tenantId, callControlId);
  }

  async unfinished(nodeId?: string): Promise<CallRecord[]> {
    return (await this.#o.calls.unfinished(nodeId)).filter((call) => !this.#finals.has(call.id) && !this.#rejected.has(call.id));
  }

  /** Writes what was refused, oldest final records first; stops at the first refusal. Resolves true when nothing is left. */
  retry(): Promise<boolean> {
    this.#timer?.cancel();
    this.#timer = null;
    return this.#serial(() => this.#retryNow());
  }

  /** Stops retrying after one last attempt; resolves once the journal's writes are on disk. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#failing) await this.retry();
    this.#timer?.cancel();
    this.#timer = null;
    await this.settled();
    await this.#o.journal.settled();
    if (this.#finals.size > 0) {
      this.#o.logger.warn({ calls: [...this.#finals.keys()] }, 'call records left in the CDR journal; written at the next start');
    }
    if (this.#changes.size > 0) this.#o.logger.warn({ calls: [...this.#changes.keys()] }, 'changes of live calls never written');
  }

  async #retryNow(): Promise<boolean> {
    let written = 0;
    try {
      for (const [id, entry] of this.#finals) {
        try {
          await this.#write(entry);
          written += 1;
        } catch (err) {
          if (isStorageFailure(err)) throw err;
          this.#reject(entry, err).set(id, entry);
        }
        this.#finals.delete(id);
      }
      for (const [id, call] of this.#changes) {
        await this.#saveChange(call);
        this.#changes.delete(id);
      }
      if (this.#failing) this.#o.logger.info('the database takes writes again');
      this.#failing = false;
    } catch (err) {
      this.#refused(err);
    }
    if (written > 0) {
      this.#o.logger.info({ calls: written, waiting: this.#finals.size }, 'call records from the CDR journal written');
      this.#o.journal.rewrite([...this.#finals.values(), ...this.#rejected.values()]).catch((err: unknown) => {
        // The entries stay in the file and are written again at the next start (writes are idempotent).
        this.#o.logger.warn({ err }, 'cannot shorten the CDR journal');
      });
    }
    if (this.#failing) this.#arm();
    return !this.#failing;
  }

  /** The call's final record, its transcripts and its events, all or nothing. */
  async #write(entry: CdrJournalEntry): Promise<void> {
    this.#committed(await this.#o.transaction(async (tx) => {
      for (const t of entry.transcripts) await tx.transcripts.save(entry.call.id, t.source, t.turns);
      return this.#changeWithEvents(tx, entry.call, entry.transcripts.map((t) => t.source));
    }));
  }

  /** A change of a live call and its events, all or nothing. */
  async #saveChange(call: CallRecord): Promise<void> {
    this.#committed(await this.#o.transaction((tx) => this.#changeWithEvents(tx, call, [])));
  }

  /**
   * The events are derived from the record as stored before the change, and appended before it is
   * saved: the save updates the in-memory live list, so it is the transaction's last statement.
   */
  async #changeWithEvents(tx: CallWriteTx, call: CallRecord, transcriptSources: readonly string[]): Promise<AppendedEvent[]> {
    const before = await tx.calls.get(call.tenant_id, call.id);
    const events = before === undefined ? [] : await tx.events.append(call.tenant_id, callEvents(before, call, transcriptSources));
    await tx.calls.save(call);
    return events;
  }

  #committed(events: AppendedEvent[]): void {
    if (events.length === 0 || !this.#o.onEvents) return;
    try {
      this.#o.onEvents(events);
    } catch (err) {
      this.#o.logger.error({ err }, 'a listener of call events threw');
    }
  }

  /** Runs `work` after every write queued before it; at once (same tick) when none is. */
  #serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#queued === 0 ? work() : this.#tail.then(work, work);
    this.#queued += 1;
    this.#tail = run.then(
      () => { this.#queued -= 1; },
      () => { this.#queued -= 1; },
    );
    return run;
  }

  #keepChange(call: CallRecord): void {
    this.#changes.set(call.id, call);
    this.#arm();
  }

  /** Keeps a final record in `pending` and in the journal until the database takes it. */
  #keepFinal(entry: CdrJournalEntry, pending: Map<string, CdrJournalEntry>): void {
    pending.set(entry.call.id, entry);
    const log = this.#o.logger.child({ call_id: entry.call.id, tenant_id: entry.call.tenant_id });
    this.#o.journal.append(entry).then(
      () => log.warn('call record kept in the CDR journal until the database takes it'),
      (err: unknown) => log.error({ err }, 'cannot write the call record to the CDR journal either; it is kept in memory and retried'),
    );
    this.#arm();
  }

  /** Logs a record the database rejected as invalid; returns where it is kept. */
  #reject(entry: CdrJournalEntry, err: unknown): Map<string, CdrJournalEntry> {
    this.#o.logger.error({ err, call_id: entry.call.id }, 'the database rejected a final call record; it stays in the CDR journal and is not retried');
    return this.#rejected;
  }

  #refused(err: unknown): void {
    if (!this.#failing) this.#o.logger.error({ err }, `the database refused a call record; retrying every ${this.#o.retryMs} ms`);
    this.#failing = true;
  }

  #arm(): void {
    if (this.#timer !== null || this.#stopped) return;
    this.#timer = this.#o.clock.setTimeout(() => {
      this.#timer = null;
      void this.retry();
    }, this.#o.retryMs);
  }
}
