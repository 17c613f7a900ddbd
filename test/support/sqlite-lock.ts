/**
 * @module Another process holding the gateway's database: a child Node opens it with its own
 * better-sqlite3 connection and runs BEGIN EXCLUSIVE, so every write of the gateway's connection
 * meets SQLITE_BUSY until `release()` commits (docs/RELIABILITY.md, storage failures).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

interface Teardown {
  teardown(fn: () => void | Promise<void>): void;
}

export interface HeldLock {
  /** Commits the transaction and waits for the child to exit. */
  release(): Promise<void>;
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const SCRIPT = `
const Database = require('better-sqlite3');
const db = new Database(process.argv[1]);
db.pragma('busy_timeout = 10000');
db.exec('BEGIN EXCLUSIVE');
process.stdout.write('locked\\n');
process.stdin.once('data', () => { db.exec('COMMIT'); db.close(); process.exit(0); });
`;

/** Resolves once the child holds the lock. */
export async function holdExclusiveLock(t: Teardown, dbFile: string): Promise<HeldLock> {
  const child = spawn(process.execPath, ['-e', SCRIPT, dbFile], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL'); });
  let err = '';
  child.stderr.on('data', (d: Buffer) => { err += d.toString(); });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => { if (d.toString().includes('locked')) resolve(); });
    child.once('exit', (code) => reject(new Error(`the lock holder exited ${code}: ${err}`)));
  });
  let released: Promise<void> | undefined;
  return {
    release: () => (released ??= new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.stdin.write('commit\n');
    })),
  };
}
