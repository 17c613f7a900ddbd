/**
 * @module The storage contract (docs/ARCHITECTURE.md "Storage"): every repository behaves the same
 * on SQLite and on PostgreSQL. {@link onEachBackend} runs one body as two subtests, one per
 * backend, each on a fresh store (SQLite in memory, PostgreSQL in a database of its own).
 */
import { randomBytes } from 'node:crypto';
import type { Test } from 'tap';
import { FakeClock } from '../../src/common/clock.js';
import { SecretBox } from '../../src/common/secret-box.js';
import { openStore, type Store } from '../../src/storage/index.js';
import { BACKENDS, storeLocation, type Backend } from '../support/postgres.js';

export const sessionPolicy = { idleMs: 30 * 60_000, absoluteMs: 8 * 3600_000 };

export interface ContractRig {
  backend: Backend;
  store: Store;
  clock: FakeClock;
  /** Opens one more store on the same database (another process sharing it); closed in teardown. */
  reopen: () => Promise<Store>;
}

/** Runs `body` once per backend, as subtests named `<name> (sqlite)` and `<name> (postgres)`. */
export function onEachBackend(t: Test, name: string, body: (t: Test, rig: ContractRig) => Promise<void>): void {
  for (const backend of BACKENDS) {
    void t.test(`${name} (${backend})`, async (t) => {
      const location = await storeLocation(t, backend);
      if (location === undefined) return;
      const clock = new FakeClock(Date.parse('2026-03-01T09:00:00.000Z'));
      const secrets = new SecretBox(randomBytes(32));
      const open = async (): Promise<Store> => {
        const store = await openStore(location, clock, sessionPolicy, secrets);
        t.teardown(() => store.close());
        return store;
      };
      const store = await open();
      await body(t, {
        backend, store, clock,
        reopen: () => (backend === 'sqlite' ? Promise.reject(new Error('an in-memory SQLite store cannot be opened twice')) : open()),
      });
    });
  }
}
