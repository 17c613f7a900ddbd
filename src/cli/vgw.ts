#!/usr/bin/env node
/**
 * @module `vgw`: the operator CLI. Works beside a running gateway on the same data folder (SQLite
 * in WAL mode with a busy timeout); prints JSON on stdout, errors as JSON on stderr.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { systemClock } from '../common/clock.js';
import { loadCarriers, SANDBOX_CARRIER } from '../config/carriers.js';
import { loadConfig } from '../config/load-config.js';
import { loadMasterKey } from '../config/master-key.js';
import { SecretBox } from '../common/secret-box.js';
import { databasePath, openStore, type Store } from '../storage/index.js';
import { clusterStatus, formatClusterStatus, leaseNodeSource, storeNodeSource } from './cluster-status.js';
import { RedisLiveState } from '../cluster/redis-live-state.js';
import { createLogger } from '../common/logger.js';
import { tailEvents } from './events-tail.js';
import { CliError, addCallerId, addNumber, createKey, createTenant, listNumbers, listTenants, revokeKey } from './operator-commands.js';



const USAGE = `usage:
  vgw tenant create NAME [--sandbox]
  vgw tenant list
  vgw key create TENANT_ID [--sandbox]
  vgw key revoke KEY
  vgw number add TENANT_ID E164 --carrier NAME
  vgw number list [TENANT_ID]
  vgw caller-id add TENANT_ID E164
  vgw events tail TENANT_ID [--type TYPE|call.*] [--call-id ID] [--from-start]
      prints the tenant's events as they are logged, one JSON envelope per line, until Ctrl-C
  vgw cluster status [--json]
      the engines sharing the store: live, draining or dead, last seen, live calls and capacity
The data folder comes from VGW_DATA_DIR or the config file named by VGW_CONFIG (default ./data);
vgw names it on stderr. Where it holds no database yet, vgw refuses unless given --init.`;

/** What `events tail` and `cluster status` (without --json) return: they printed their own lines. */
const PRINTED = Symbol('printed');

function run(store: Store, argv: string[], knownCarriers: readonly string[], redisUrl?: string): Promise<unknown> {
  const { positionals, values } = parseArgs({
    args: argv, allowPositionals: true, strict: true,
    options: {
      init: { type: 'boolean', default: false }, sandbox: { type: 'boolean', default: false }, carrier: { type: 'string' }, help: { type: 'boolean', short: 'h' },
      type: { type: 'string' }, 'call-id': { type: 'string' }, 'from-start': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
  });
  const [noun, verb, a, b] = positionals;
  const command = `${noun ?? ''} ${verb ?? ''}`;
  const arity = (n: number) => { if (positionals.length !== n) throw new CliError('usage', USAGE, 2); };
  switch (command) {
    case 'tenant create': arity(3); return createTenant(store, a!, values.sandbox);
    case 'tenant list': arity(2); return listTenants(store);
    case 'key create': arity(3); return createKey(store, a!, values.sandbox);
    case 'key revoke': arity(3); return revokeKey(store, a!);
    case 'number add': arity(4); return addNumber(store, a!, b!, values.carrier, knownCarriers);
    case 'caller-id add': arity(4); return addCallerId(store, a!, b!);
    case 'events tail': {
      arity(3);
      const stop = new AbortController();
      process.once('SIGINT', () => stop.abort());
      process.once('SIGTERM', () => stop.abort());
      return tailEvents(store, a!, {
        filter: { type: values.type, callId: values['call-id'] }, fromStart: values['from-start'], pollMs: 500,
        write: (line) => process.stdout.write(line), signal: stop.signal,
      }).then(() => PRINTED);
    }
    case 'cluster status': {
      arity(2);
      return withLeases(redisUrl, async (leases) => {
        // With Redis the leases come first: engines in a cluster announce themselves there, not in the table.
        const status = await clusterStatus(leases ? [leaseNodeSource(leases), storeNodeSource(store)] : [storeNodeSource(store)], Date.now());
        if (values.json) return status;
        process.stdout.write(formatClusterStatus(status));
        return PRINTED;
      });
    }
    case 'number list': if (positionals.length > 3) throw new CliError('usage', USAGE, 2); return listNumbers(store, a);
    default: throw new CliError('usage', USAGE, 2);
  }
}

/** Runs `fn` over the cluster's leases when `cluster.redis_url` is set, closing the connection after. */
async function withLeases<T>(redisUrl: string | undefined, fn: (leases: RedisLiveState | undefined) => Promise<T>): Promise<T> {
  if (redisUrl === undefined) return fn(undefined);
  const live = await RedisLiveState.open({ url: redisUrl, logger: createLogger({ level: 'silent' }) });
  try {
    return await fn(live);
  } finally {
    await live.close();
  }
}

async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h') || argv.length === 0) {
    process.stdout.write(`${USAGE}\n`);
    return argv.length === 0 ? 2 : 0;
  }
  let store: Store | undefined;
  try {
    const config = loadConfig();
    const file = databasePath(config.data_dir);
    process.stderr.write(`vgw: data folder ${resolve(config.data_dir)}\n`);
    // A CLI run from another folder must not quietly make an empty database and answer from it.
    if (config.storage.url === undefined && !existsSync(file) && !argv.includes('--init')) {
      throw new CliError('no_database', `no gateway database in ${resolve(config.data_dir)}; set VGW_DATA_DIR (or VGW_CONFIG) to the gateway's data folder, or pass --init to create one here`);
    }
    // The cluster's status reads no secret: it must not create a master key where it is run.
    const masterKey = argv[0] === 'cluster' ? randomBytes(32) : loadMasterKey(config.secret_key, config.data_dir);
    // Sessions are not touched by the CLI; the policy only has to be valid.
    store = await openStore(config.storage.url ?? file, systemClock, { idleMs: 1, absoluteMs: 1 }, new SecretBox(masterKey), { busyTimeoutMs: config.storage.busy_timeout_ms });
    const knownCarriers = [SANDBOX_CARRIER, ...loadCarriers(config.carriers_file).map((c) => c.name)];
    const result = await run(store, argv, knownCarriers, config.cluster.redis_url);
    if (result !== PRINTED) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (err) {
    const known = err instanceof CliError;
    const usage = !known && (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    const code = known ? err.code : usage ? 'usage' : (err as Error).name === 'ConfigError' ? 'config' : 'failed';
    process.stderr.write(`${JSON.stringify({ error: { code, message: (err as Error).message } })}\n`);
    return known ? err.exitCode : usage ? 2 : 1;
  } finally {
    await store?.close();
  }
}

process.exitCode = await main(process.argv.slice(2));
