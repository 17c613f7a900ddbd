/** @module The storage layer's public surface: the database and one repository per aggregate. */
import type { Clock } from '../common/clock.js';
import { ApiKeyRepository } from './api-key-repository.js';
import { openSqlDatabase, type DatabaseOptions } from './database.js';
import type { SqlDatabase, SqlExecutor } from './sql/sql-database.js';
import { NumberRepository } from './number-repository.js';
import { CallerIdRepository } from './caller-id-repository.js';
import { SessionRepository, type SessionPolicy } from './session-repository.js';
import { TenantRepository } from './tenant-repository.js';
import { AgentRepository } from './agent-repository.js';
import { RouteRepository } from './route-repository.js';
import { SipCredentialRepository } from './sip-credential-repository.js';
import { CallRepository, type CallRepositoryOptions } from './call-repository.js';
import { NodeRepository } from './node-repository.js';
import { TranscriptRepository } from './transcript-repository.js';
import { WebhookRepository } from './webhook-repository.js';
import { RecordingRepository } from './recording-repository.js';
import { IdempotencyRepository } from './idempotency-repository.js';
import { SipTraceRepository } from './sip-trace-repository.js';
import type { SecretBox } from '../common/secret-box.js';
import { WebhookEndpointRepository } from './webhook-endpoint-repository.js';
import { EventRepository } from './event-repository.js';
import { EventDeliveryRepository } from './event-delivery-repository.js';

export { openDatabase, openSqlDatabase, migrate, databasePath, DEFAULT_BUSY_TIMEOUT_MS, type DatabaseOptions, type Db } from './database.js';
export { SqliteDatabase } from './sql/sqlite-database.js';
export { isPostgresUrl, redactDatabaseUrl, type SqlDatabase, type SqlExecutor, type SqlParams } from './sql/sql-database.js';
export { CdrJournal, type CdrJournalEntry } from './cdr-journal.js';
export { DurableCallStore, type DurableCallStoreOptions } from './durable-call-store.js';
export { ApiKeyRepository, looksLikeApiKey, type ApiKeyKind, type ApiKeyRecord } from './api-key-repository.js';
export { SessionRepository, type SessionPolicy, type SessionPrincipal } from './session-repository.js';
export { TenantRepository, type TenantRecord } from './tenant-repository.js';
export { NumberRepository, type NumberRecord, type AddNumberOutcome } from './number-repository.js';
export { CallerIdRepository, type CallerIdRecord, type AddCallerIdOutcome } from './caller-id-repository.js';
export { AgentRepository, type AgentRecord, type AgentSettings, type AgentTransferPolicy, type ApiKeyChange } from './agent-repository.js';
export { RouteRepository, type RouteRecord } from './route-repository.js';
export { SipCredentialRepository, type SipCredentialRecord } from './sip-credential-repository.js';
export { NodeRepository, type NodeRecord } from './node-repository.js';
export { CallRepository, type CallRepositoryOptions, type CallRecord, type CallListFilter, type CarrierFilter, type CallDirection, type CallRecordState } from './call-repository.js';
export type { CallListItem } from './live-call-index.js';
export { TranscriptRepository, type TranscriptTurn, type TranscriptSource } from './transcript-repository.js';
export {
  WebhookRepository, type WebhookDelivery, type AttributionCandidate, type RoutedCallQuery, type CallDeliveries, type ConversationBinding,
} from './webhook-repository.js';
export { RecordingRepository, type RecordingRecord, type RecordingSource } from './recording-repository.js';
export { IdempotencyRepository, IDEMPOTENCY_TTL_MS, type IdempotencyReservation } from './idempotency-repository.js';
export { SipTraceRepository, type SipTraceMessage, type SipTraceRecord } from './sip-trace-repository.js';
export type { Page, PageAfter, PageRequest } from './page.js';
export { WebhookEndpointRepository, PREVIOUS_SECRET_VALIDITY_MS, type WebhookEndpointRecord, type WebhookEndpointChange } from './webhook-endpoint-repository.js';
export { EventRepository, matchesFilter, type AppendedEvent, type EventRecord, type EventFilter, type NewEvent } from './event-repository.js';
export {
  EventDeliveryRepository, type AttemptedDelivery, type DueDelivery, type DeliveryAttemptRecord, type AttemptOutcome, type DeliveryState, type ScanCaps,
} from './event-delivery-repository.js';

/** Every repository, over the database or over one transaction. */
export interface Repositories {
  tenants: TenantRepository;
  apiKeys: ApiKeyRepository;
  sessions: SessionRepository;
  numbers: NumberRepository;
  callerIds: CallerIdRepository;
  agents: AgentRepository;
  routes: RouteRepository;
  sipCredentials: SipCredentialRepository;
  calls: CallRepository;
  transcripts: TranscriptRepository;
  webhooks: WebhookRepository;
  recordings: RecordingRepository;
  idempotency: IdempotencyRepository;
  nodes: NodeRepository;
  sipTraces: SipTraceRepository;
  webhookEndpoints: WebhookEndpointRepository;
  events: EventRepository;
  eventDeliveries: EventDeliveryRepository;
}

/** Every repository over one database, built once at start-up. */
export interface Store extends Repositories {
  db: SqlDatabase;
  /**
   * Runs `fn` in one transaction, every statement through the repositories it is given
   * (docs/ARCHITECTURE.md "Storage"): committed when it resolves, rolled back when it rejects.
   * On SQLite other statements wait until it ends; nested calls become savepoints.
   */
  transaction<T>(fn: (tx: Repositories) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** How a process uses the calls table (docs/ARCHITECTURE.md "Process roles"); both absent in a single process. */
export type StoreOptions = DatabaseOptions & CallRepositoryOptions;

function repositoriesOver(db: SqlExecutor, calls: CallRepository, clock: Clock, sessionPolicy: SessionPolicy, secrets: SecretBox): Repositories {
  return {
    tenants: new TenantRepository(db, clock),
    apiKeys: new ApiKeyRepository(db, clock),
    sessions: new SessionRepository(db, clock, sessionPolicy),
    numbers: new NumberRepository(db, clock),
    callerIds: new CallerIdRepository(db, clock),
    agents: new AgentRepository(db, clock, secrets),
    routes: new RouteRepository(db, clock),
    sipCredentials: new SipCredentialRepository(db, clock, secrets),
    calls,
    transcripts: new TranscriptRepository(db, clock),
    webhooks: new WebhookRepository(db, clock),
    recordings: new RecordingRepository(db, clock),
    idempotency: new IdempotencyRepository(db, clock),
    nodes: new NodeRepository(db, clock),
    sipTraces: new SipTraceRepository(db),
    webhookEndpoints: new WebhookEndpointRepository(db, clock, secrets),
    events: new EventRepository(db, clock),
    eventDeliveries: new EventDeliveryRepository(db, clock),
  };
}

/**
 * Opens the store at `location`: an SQLite file (`:memory:` for tests) or a PostgreSQL URL
 * (docs/CONFIGURATION.md `storage.url`), with its migrations applied.
 */
export async function openStore(location: string, clock: Clock, sessionPolicy: SessionPolicy, secrets: SecretBox, options: StoreOptions = {}): Promise<Store> {
  const db = await openSqlDatabase(location, options);
  const calls = new CallRepository(db, { nodeId: options.nodeId, liveList: options.liveList });
  try {
    await calls.load();
  } catch (err) {
    await db.close();
    throw err;
  }
  return {
    db,
    ...repositoriesOver(db, calls, clock, sessionPolicy, secrets),
    transaction: (fn) => db.transaction((tx) => fn(repositoriesOver(tx, calls.over(tx), clock, sessionPolicy, secrets))),
    close: () => db.close(),
  };
}
