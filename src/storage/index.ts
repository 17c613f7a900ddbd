/** @module The storage layer's public surface: the database and one repository per aggregate. */
import type { Clock } from '../common/clock.js';
import { ApiKeyRepository } from './api-key-repository.js';
import { openDatabase, type DatabaseOptions, type Db } from './database.js';
import { NumberRepository } from './number-repository.js';
import { CallerIdRepository } from './caller-id-repository.js';
import { SessionRepository, type SessionPolicy } from './session-repository.js';
import { TenantRepository } from './tenant-repository.js';
import { AgentRepository } from './agent-repository.js';
import { RouteRepository } from './route-repository.js';
import { SipCredentialRepository } from './sip-credential-repository.js';
import { CallRepository } from './call-repository.js';
import { TranscriptRepository } from './transcript-repository.js';
import { WebhookRepository } from './webhook-repository.js';
import { RecordingRepository } from './recording-repository.js';
import { IdempotencyRepository } from './idempotency-repository.js';
import type { SecretBox } from '../common/secret-box.js';

export { openDatabase, migrate, databasePath, DEFAULT_BUSY_TIMEOUT_MS, type DatabaseOptions, type Db } from './database.js';
export { CdrJournal, type CdrJournalEntry } from './cdr-journal.js';
export { DurableCallStore, type DurableCallStoreOptions } from './durable-call-store.js';
export { ApiKeyRepository, looksLikeApiKey, type ApiKeyKind, type ApiKeyRecord } from './api-key-repository.js';
export { SessionRepository, type SessionPolicy, type SessionPrincipal } from './session-repository.js';
export { TenantRepository, type TenantRecord } from './tenant-repository.js';
export { NumberRepository, type NumberRecord, type AddNumberOutcome } from './number-repository.js';
export { CallerIdRepository, type CallerIdRecord, type AddCallerIdOutcome } from './caller-id-repository.js';
export { AgentRepository, type AgentRecord, type AgentSettings, type ApiKeyChange } from './agent-repository.js';
export { RouteRepository, type RouteRecord } from './route-repository.js';
export { SipCredentialRepository, type SipCredentialRecord } from './sip-credential-repository.js';
export { CallRepository, type CallRecord, type CallListFilter, type CarrierFilter, type CallDirection, type CallRecordState } from './call-repository.js';
export type { CallListItem } from './live-call-index.js';
export { TranscriptRepository, type TranscriptTurn, type TranscriptSource } from './transcript-repository.js';
export {
  WebhookRepository, type WebhookDelivery, type AttributionCandidate, type RoutedCallQuery, type CallDeliveries, type ConversationBinding,
} from './webhook-repository.js';
export { RecordingRepository, type RecordingRecord, type RecordingSource } from './recording-repository.js';
export { IdempotencyRepository, IDEMPOTENCY_TTL_MS, type IdempotencyReservation } from './idempotency-repository.js';
export type { Page, PageAfter, PageRequest } from './page.js';

/** Every repository over one database, built once at start-up. */
export interface Store {
  db: Db;
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
  /** Runs `fn` in one IMMEDIATE transaction (nested calls become savepoints). */
  transaction<T>(fn: () => T): T;
  close(): void;
}

export function openStore(file: string, clock: Clock, sessionPolicy: SessionPolicy, secrets: SecretBox, options: DatabaseOptions = {}): Store {
  const db = openDatabase(file, options);
  return {
    db,
    tenants: new TenantRepository(db, clock),
    apiKeys: new ApiKeyRepository(db, clock),
    sessions: new SessionRepository(db, clock, sessionPolicy),
    numbers: new NumberRepository(db, clock),
    callerIds: new CallerIdRepository(db, clock),
    agents: new AgentRepository(db, clock, secrets),
    routes: new RouteRepository(db, clock),
    sipCredentials: new SipCredentialRepository(db, clock, secrets),
    calls: new CallRepository(db),
    transcripts: new TranscriptRepository(db, clock),
    webhooks: new WebhookRepository(db, clock),
    recordings: new RecordingRepository(db, clock),
    idempotency: new IdempotencyRepository(db, clock),
    transaction: (fn) => db.transaction(fn).immediate(),
    close: () => db.close(),
  };
}
