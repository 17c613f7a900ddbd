/**
 * @module The master key for secrets at rest: VGW_SECRET_KEY when set, otherwise a key file
 * generated once into the data folder with mode 0600.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from './load-config.js';

export const MASTER_KEY_FILE = 'master.key';

/** Accepts 64 hex characters or base64 of exactly 32 bytes. */
export function decodeMasterKey(text: string, where: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (key.length !== 32) throw new ConfigError(`config: secret_key (${where}) must be 32 bytes, as 64 hex characters or base64`);
  return key;
}

export function loadMasterKey(secretKey: string | undefined, dataDir: string): Buffer {
  if (secretKey) return decodeMasterKey(secretKey, 'VGW_SECRET_KEY or config');
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = join(dataDir, MASTER_KEY_FILE);
  try {
    const mode = statSync(file).mode & 0o777;
    if (mode & 0o077) chmodSync(file, 0o600); // tighten a key file someone copied loosely
    return decodeMasterKey(readFileSync(file, 'utf8'), file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const key = randomBytes(32);
  // 'wx' fails if another process (the CLI beside a starting gateway) created it meanwhile.
  try {
    writeFileSync(file, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return decodeMasterKey(readFileSync(file, 'utf8'), file);
    throw err;
  }
}
