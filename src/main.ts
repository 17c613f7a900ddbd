#!/usr/bin/env node
/** @module The process entry point: load config, start the gateway, stop it on SIGTERM/SIGINT. */
import { createLogger } from './common/logger.js';
import { isStorageFailure } from './common/storage-failure.js';
import { ConfigError, loadConfig } from './config/load-config.js';
import { startProcess } from './gateway.js';
import { describeStartFailure } from './start-up.js';

async function main(): Promise<void> {
  let gateway;
  let logger;
  let config;
  try {
    config = loadConfig();
    logger = createLogger({ level: config.log_level });
    gateway = await startProcess({ config, logger });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    // The port taken, the data folder read-only, the database locked: one line, a distinct code.
    const failure = config ? describeStartFailure(err, config) : null;
    if (failure) {
      process.stderr.write(`${failure.message}\n`);
      process.exit(failure.exitCode);
    }
    throw err;
  }
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    signals += 1;
    if (signals > 1) {
      logger.warn({ signal }, 'second signal: exiting without waiting for the drain');
      process.exit(1);
    }
    gateway.stop(signal).then(
      () => { logger.flush(); process.exitCode = 0; },
      (err: unknown) => { logger.error({ err }, 'shutdown failed'); process.exitCode = 1; },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

process.on('uncaughtException', (err) => {
  // A failed write (database locked past the busy time-out, disk full) is an outage, not a broken
  // invariant: the statement was not applied, and ending every live call of every tenant for it
  // would be far worse than the one failed operation (docs/RELIABILITY.md, storage failures).
  if (isStorageFailure(err)) {
    process.stderr.write(`storage failure outside a request (process kept up): ${err.stack ?? String(err)}\n`);
    return;
  }
  // A broken invariant: log it and die loudly; a supervisor restarts us and recovery ends the
  // calls left behind (contract: calls a crash left unfinished end with gateway_restart).
  process.stderr.write(`fatal: ${err.stack ?? String(err)}\n`);
  process.exit(70);
});

main().catch((err: unknown) => {
  process.stderr.write(`fatal: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
