/**
 * @module Start-up failures as one clear line and a distinct exit code (docs/RELIABILITY.md,
 * "Start-up exit codes"): the port in use with its setting, a data folder the gateway cannot
 * write, a database another process holds locked, a bad configuration.
 */
import { accessSync, constants, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Config } from './config/schema.js';

/** sysexits.h codes, so supervisors can tell an operator's mistake from a crash (70). */
export const EXIT = {
  /** A listening port is taken or not ours to bind. */
  portUnavailable: 69,
  /** The data folder cannot be created or written. */
  dataDirNotWritable: 73,
  /** Another process holds the database locked past the busy timeout. */
  databaseLocked: 75,
  /** A bad setting or carriers file (the key is named). */
  config: 78,
} as const;

/** A start that cannot go on: `message` is the one line printed on stderr. */
export class StartupError extends Error {
  override readonly name = 'StartupError';
  readonly exitCode: number;

  constructor(message: string, exitCode: number) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** Creates the data folder if missing and checks that it is writable, before anything is opened. */
export function prepareDataDir(dataDir: string): void {
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    accessSync(dataDir, constants.W_OK | constants.X_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw new StartupError(`data folder ${resolve(dataDir)} is not writable (${code}); set data_dir (VGW_DATA_DIR) to a folder the gateway can write`, EXIT.dataDirNotWritable);
  }
}

/** The setting (and variable) that chose a port the gateway failed to bind. */
function portSetting(config: Readonly<Config>, port: number | undefined): string {
  if (port === config.http.port) return 'http.port (VGW_HTTP_PORT)';
  if (port === config.sip.port) return 'sip.port (VGW_SIP_PORT)';
  if (port === config.sip.tls?.port) return 'sip.tls.port';
  if (port !== undefined && port >= config.rtp.port_min && port <= config.rtp.port_max) return 'rtp.port_min..rtp.port_max (VGW_RTP_PORT_MIN, VGW_RTP_PORT_MAX)';
  return 'a listening port';
}

/** Turns what a failed start threw into a StartupError, or null for a defect (a crash, exit 70). */
export function describeStartFailure(err: unknown, config: Readonly<Config>): StartupError | null {
  if (err instanceof StartupError) return err;
  // A SIP TransportError carries the socket's error as its cause.
  const raw = err as { code?: string; port?: number; address?: string; syscall?: string; cause?: { syscall?: string; port?: number; address?: string } };
  const e = { ...raw, syscall: raw.syscall ?? raw.cause?.syscall, port: raw.port ?? raw.cause?.port, address: raw.address ?? raw.cause?.address };
  if ((e.code === 'EADDRINUSE' || e.code === 'EACCES' || e.code === 'EADDRNOTAVAIL') && (e.syscall === 'listen' || e.syscall === 'bind')) {
    const what = e.code === 'EADDRINUSE' ? 'is already in use' : e.code === 'EACCES' ? 'may not be bound by this user' : 'is not an address of this host';
    return new StartupError(`port ${e.port ?? '?'} on ${e.address ?? '?'} ${what} (${e.code}); change ${portSetting(config, e.port)} or stop the other process`, EXIT.portUnavailable);
  }
  if (e.code === 'SQLITE_BUSY' || e.code === 'SQLITE_LOCKED') {
    return new StartupError(`the database in ${resolve(config.data_dir)} is locked by another process (${e.code}); stop it or use another data_dir (VGW_DATA_DIR)`, EXIT.databaseLocked);
  }
  if (e.code === 'SQLITE_CANTOPEN' || e.code === 'SQLITE_READONLY' || (e.code === 'EACCES' && e.syscall !== undefined)) {
    return new StartupError(`data folder ${resolve(config.data_dir)} is not writable (${e.code}); set data_dir (VGW_DATA_DIR) to a folder the gateway can write`, EXIT.dataDirNotWritable);
  }
  return null;
}
