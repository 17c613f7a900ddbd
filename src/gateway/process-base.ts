/**
 * @module What every process role opens first (docs/ARCHITECTURE.md "Process roles"): the
 * carriers file, the data folder, the secrets key, the store (with how this role uses the calls
 * table), the metrics registry, the providers and the recordings port.
 */
import { collectDefaultMetrics, Registry } from 'prom-client';
import { systemClock, type Clock } from '../common/clock.js';
import type { Logger } from '../common/logger.js';
import { FolderRecordingFiles } from '../common/recording-files.js';
import { SecretBox } from '../common/secret-box.js';
import { loadCarriers, type CarrierConfig } from '../config/carriers.js';
import { loadMasterKey } from '../config/master-key.js';
import type { Config } from '../config/schema.js';
import { createProviderRegistry, type ProviderRegistry } from '../providers/index.js';
import { prepareDataDir } from '../start-up.js';
import { databasePath, openStore, type Store, type StoreOptions } from '../storage/index.js';

export interface GatewayOptions {
  config: Readonly<Config>;
  logger: Logger;
  clock?: Clock;
  /** Where the first-start sandbox key is announced (stderr in production: stdout is the JSON log stream). */
  announce?: (text: string) => void;
}

export interface ProcessBase {
  config: Readonly<Config>;
  logger: Logger;
  clock: Clock;
  announce: (text: string) => void;
  carriers: readonly CarrierConfig[];
  secrets: SecretBox;
  store: Store;
  metrics: Registry;
  platforms: ProviderRegistry;
  recordings: FolderRecordingFiles;
}

export async function openProcessBase(options: GatewayOptions, storeOptions: Pick<StoreOptions, 'nodeId' | 'liveList'>): Promise<ProcessBase> {
  const { config, logger } = options;
  const clock = options.clock ?? systemClock;
  const carriers = loadCarriers(config.carriers_file);
  prepareDataDir(config.data_dir);
  const secrets = new SecretBox(loadMasterKey(config.secret_key, config.data_dir));
  const store = await openStore(config.storage.url ?? databasePath(config.data_dir), clock, {
    idleMs: config.auth.session_idle_minutes * 60_000,
    absoluteMs: config.auth.session_absolute_hours * 3_600_000,
  }, secrets, { busyTimeoutMs: config.storage.busy_timeout_ms, ...storeOptions });
  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics, prefix: 'vgw_' });
  return {
    config, logger, clock, carriers, secrets, store, metrics,
    announce: options.announce ?? ((text) => process.stderr.write(`${text}\n`)),
    platforms: createProviderRegistry(config.providers, { clock }),
    // loadConfig resolves recordings.dir (`<data_dir>/recordings` when unset).
    recordings: new FolderRecordingFiles(config.recordings.dir ?? `${config.data_dir}/recordings`),
  };
}

/** A running process of any role, as main.ts drives it. */
export interface RoleProcess {
  /** The public HTTP port: the control API (`all`, `api`) or health and metrics (`engine`). */
  httpPort: number;
  /** Stops taking new work, waits up to the drain time for work in flight, then closes. Idempotent. */
  stop(reason: string): Promise<void>;
}
