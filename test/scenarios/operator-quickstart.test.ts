/**
 * The README's quick start, for real: start the gateway process on a fresh data folder, create a
 * tenant with the CLI, use its key over HTTP, then stop the gateway with SIGTERM (docs/CONFIGURATION.md "Operator surface").
 */
import t from 'tap';
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { startGatewayProcess } from '../support/gateway-process.js';

const run = promisify(execFile);
const GATEWAY_ENV = (dataDir: string): Record<string, string> => ({
  VGW_DATA_DIR: dataDir, VGW_HTTP_PORT: '0', VGW_SIP_HOST: '127.0.0.1', VGW_SIP_PORT: '0', VGW_LOG_LEVEL: 'info',
});
const TSX = ['--import', 'tsx'];

async function vgw(dataDir: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [...TSX, 'src/cli/vgw.ts', ...args], { env: { ...process.env, VGW_DATA_DIR: dataDir } });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** vgw's stderr: first the data folder it used, last the error as JSON. */
const lastJson = (stderr: string): { error: { code: string } } => JSON.parse(stderr.trim().split('\n').at(-1)!) as { error: { code: string } };

t.test('docs/DECISIONS.md "The CLI and its data folder": no database is made unless --init, and the folder is named', async (t) => {
  const elsewhere = t.testdir({});
  const refused = await vgw(elsewhere, 'tenant', 'list');
  t.equal(refused.code, 1, 'a folder with no gateway database is refused');
  t.equal(lastJson(refused.stderr).error.code, 'no_database');
  t.match(refused.stderr, new RegExp(`^vgw: data folder ${elsewhere.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\n`), 'stderr names the folder used');
  t.notOk(existsSync(`${elsewhere}/gateway.db`), 'and nothing was created there');
  const made = await vgw(elsewhere, 'tenant', 'list', '--init');
  t.equal(made.code, 0, made.stderr);
  t.same(JSON.parse(made.stdout), { tenants: [] }, '--init creates the database on purpose');
  t.ok(existsSync(`${elsewhere}/gateway.db`));
  t.equal((await vgw(elsewhere, 'tenant', 'list')).code, 0, 'then it is used without --init');
});

t.test('docs/CONFIGURATION.md "Operator surface": first start, CLI tenant, authenticated request, graceful stop', async (t) => {
  const dataDir = t.testdir({});
  const gw = await startGatewayProcess(t, GATEWAY_ENV(dataDir));
  t.match(gw.output(), /sandbox key: vgw_test_[0-9A-Za-z]{40}/, 'the sandbox key is printed on first start');

  const created = await vgw(dataDir, 'tenant', 'create', 'Acme');
  t.equal(created.code, 0, created.stderr);
  const { tenant, api_key: apiKey } = JSON.parse(created.stdout);
  t.match(tenant.id, /^ten_/);
  t.match(apiKey, /^vgw_live_/);

  const base = `http://127.0.0.1:${gw.port}`;
  const ok = await fetch(`${base}/v1/tenant`, { headers: { authorization: `Bearer ${apiKey}` } });
  t.equal(ok.status, 200, 'the CLI-made key works against the running gateway');
  t.equal((await ok.json() as { id: string }).id, tenant.id);
  t.equal((await fetch(`${base}/v1/tenant`)).status, 401, 'and nothing works without it');

  const added = await vgw(dataDir, 'number', 'add', tenant.id, '+15550100', '--carrier', 'sandbox');
  t.equal(added.code, 0, added.stderr);
  const list = await fetch(`${base}/v1/numbers`, { headers: { authorization: `Bearer ${apiKey}` } });
  t.same((await list.json() as { data: { phone_number: string }[] }).data.map((n) => n.phone_number), ['+15550100']);

  const revoked = await vgw(dataDir, 'key', 'revoke', apiKey);
  t.equal(revoked.code, 0);
  t.equal((await fetch(`${base}/v1/tenant`, { headers: { authorization: `Bearer ${apiKey}` } })).status, 401, 'revocation is seen by the running gateway at once');

  const usage = await vgw(dataDir, 'number', 'add', tenant.id, '5550100', '--carrier', 'sandbox');
  t.equal(usage.code, 2);
  t.equal(lastJson(usage.stderr).error.code, 'invalid_number');
  const unknownCarrier = await vgw(dataDir, 'number', 'add', tenant.id, '+15550101', '--carrier', 'nowhere');
  t.equal(lastJson(unknownCarrier.stderr).error.code, 'unknown_carrier', 'a number must be on a carrier the gateway knows');
  const missing = await vgw(dataDir, 'key', 'create', 'ten_missing');
  t.equal(missing.code, 1);
  t.equal(lastJson(missing.stderr).error.code, 'tenant_not_found');

  gw.child.kill('SIGTERM');
  const [code] = await once(gw.child, 'exit');
  t.equal(code, 0, 'SIGTERM drains and exits cleanly');
  t.match(gw.output(), /"msg":"draining"[\s\S]*"msg":"stopped"/);

  const again = await startGatewayProcess(t, GATEWAY_ENV(dataDir));
  t.notMatch(again.output(), /sandbox key/, 'the sandbox key is shown only on the first start');
  again.child.kill('SIGTERM');
  await once(again.child, 'exit');
});

t.test('docs/CONFIGURATION.md "Operator surface": a broken carriers file stops the start with the carrier named', async (t) => {
  const dir = t.testdir({ 'carriers.yaml': 'carriers:\n  - name: acme\n    inbound: { sources: [not-an-ip] }\n' });
  const child = spawn(process.execPath, [...TSX, 'src/main.ts'], {
    env: { ...process.env, VGW_DATA_DIR: dir, VGW_HTTP_PORT: '0', VGW_CARRIERS_FILE: `${dir}/carriers.yaml` }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
  const [code] = await once(child, 'exit');
  t.equal(code, 78);
  t.match(stderr, /carrier "acme": inbound\.sources has "not-an-ip"/);
});

t.test('docs/CONFIGURATION.md "Operator surface": a bad setting stops the start with the key named', async (t) => {
  const child = spawn(process.execPath, [...TSX, 'src/main.ts'], { env: { ...process.env, VGW_HTTP_PORT: 'eighty', VGW_DATA_DIR: t.testdir({}) }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
  const [code] = await once(child, 'exit');
  t.equal(code, 78, 'EX_CONFIG');
  t.match(stderr, /http\.port must be integer \(VGW_HTTP_PORT\)/);
});
