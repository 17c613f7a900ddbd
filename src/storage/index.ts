/** @module The storage layer's public surface: the database and one repository per aggregate. */
import type { Clock } from '../common/clock.js';
import { ApiKeyRepository } from './api-key-repository.js';
import { openDatabase, type Db } from './database.js';
import { NumberRepository } from './number-repository.js';
import { SessionRepository, type SessionPolicy } from './session-repository.js';
import { TenantRepository } from './tenant-repository.js';

export { openDatabase, migrate, databasePath, type Db } from './database.js';
export { ApiKeyRepository, looksLikeApiKey, type ApiKeyKind, type ApiKeyRecord } from './api-key-repository.js';
export { SessionRepository, type SessionPolicy, type SessionPrincipal } from './session-repository.js';
export { TenantRepository, type TenantRecord } from './tenant-repository.js';
export { NumberRepository, type NumberRecord, type AddNumberOutcome } from './number-repository.js';
export type { Page, PageAfter, PageRequest } from './page.js';

/** Every repository over one database, built once at start-up. */
export interface Store {
  db: Db;
  tenants: TenantRepository;
  apiKeys: ApiKeyRepository;
  sessions: SessionRepository;
  numbers: NumberRepository;
  close(): void;
}

export function openStore(file: string, clock: Clock, sessionPolicy: SessionPolicy): Store {
  const db = openDatabase(file);
  return {
    db,
    tenants: new TenantRepository(db, clock),
    apiKeys: new ApiKeyRepository(db, clock),
    sessions: new SessionRepository(db, clock, sessionPolicy),
    numbers: new NumberRepository(db, clock),
    close: () => db.close(),
  };
}
