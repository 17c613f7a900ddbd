/**
 * Start-up failures (docs/RELIABILITY.md, "Start-up exit codes"): one clear line on stderr, a
 * distinct exit code, no stack; and nothing half-made, so the next first start prints the key.
 */
import t from 'tap';
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import Database from 'better-sqlite3';
import { startGatewayProcess } from '../support/gateway-process.js';
import { timedOut } from '../support/deadline.js';

// Each case starts a gateway process; the machine is shared, so the file gets room.
t.setTimeout(300_000);
const BASE_ENV = { VGW_HTTP_PORT: '0', VGW_SIP_HOST: '127.0.0.1', VGW_SIP_PORT: '0', VGW_LOG_LEVEL: 'info' };

async function startAndFail(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { env: { ...process.env, ...BASE_ENV, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const [code] = await once(child, 'exit') as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr };
}

t.test('HTTP port in use: exit 69, one line naming the port and http.port; the next start prints the key', async (t) => {
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  t.teardown(() => blocker.close());
  const port = (blocker.address() as AddressInfo).port;
  const dataDir = t.testdir({});
  const failed = await startAndFail({ VGW_DATA_DIR: dataDir, VGW_HTTP_PORT: String(port) });
  t.equal(failed.code, 69, 'EX_UNAVAILABLE');
  t.equal(failed.stderr.trim().split('\n').length, 1, `one line: ${failed.stderr}`);
  t.match(failed.stderr, new RegExp(`port ${port} on 127\\.0\\.0\\.1 is already in use .*http\\.port \\(VGW_HTTP_PORT\\)`));
  t.notMatch(failed.stderr + failed.stdout, /fatal| {4}at |sandbox key/, 'no stack, and no key announced for a start that failed');

  const next = await startGatewayProcess(t, { ...BASE_ENV, VGW_DATA_DIR: dataDir });
  await waitFor(() => /sandbox key: vgw_test_/.test(next.output()));
  t.pass('the next start is a first start again and prints the sandbox key');
  next.child.kill('SIGTERM');
  await once(next.child, 'exit');
});

t.test('SIP port in use: exit 69 naming sip.port', async (t) => {
  const udp = createSocket('udp4');
  await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
  t.teardown(() => udp.close());
  const port = udp.address().port;
  const failed = await startAndFail({ VGW_DATA_DIR: t.testdir({}), VGW_SIP_PORT: String(port) });
  t.equal(failed.code, 69);
  t.match(failed.stderr, new RegExp(`port ${port} .*already in use .*sip\\.port \\(VGW_SIP_PORT\\)`));
  t.equal(failed.stderr.trim().split('\n').length, 1, failed.stderr);
});

t.test('data folder not writable: exit 73 naming the folder and data_dir', async (t) => {
  const dir = t.testdir({});
  writeFileSync(`${dir}/a-file`, '');
  const failed = await startAndFail({ VGW_DATA_DIR: `${dir}/a-file/data` });
  t.equal(failed.code, 73, 'EX_CANTCREAT');
  t.match(failed.stderr, /data folder .*a-file\/data is not writable \(ENOTDIR\).*VGW_DATA_DIR/);
  t.equal(failed.stderr.trim().split('\n').length, 1, failed.stderr);
});

t.test('database locked by another process: exit 75 after the busy timeout', async (t) => {
  const dataDir = t.testdir({});
  const holder = new Database(`${dataDir}/gateway.db`);
  holder.exec('BEGIN EXCLUSIVE');
  t.teardown(() => { holder.exec('ROLLBACK'); holder.close(); });
  const failed = await startAndFail({ VGW_DATA_DIR: dataDir });
  t.equal(failed.code, 75, 'EX_TEMPFAIL');
  t.match(failed.stderr, /the database in .* is locked by another process \(SQLITE_BUSY\)/);
  t.equal(failed.stderr.trim().split('\n').length, 1, failed.stderr);
});

async function waitFor(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 50));
  if (!check()) throw timedOut(check.toString(), 200 * 50);
}
