/**
 * docs/EVENTS.md "Live stream": `vgw events tail TENANT_ID`, a real CLI process beside the store,
 * prints the tenant's events as they are logged, one JSON envelope per line, filtered by
 * `--type` (prefix form too), never another tenant's, and stops cleanly on SIGINT.
 */
import t from 'tap';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { FakeClock } from '../../src/common/clock.js';
import { SecretBox } from '../../src/common/secret-box.js';
import { databasePath, openStore } from '../../src/storage/index.js';

t.test('vgw events tail prints the tenant\'s new events as JSON lines until interrupted', async (t) => {
  const dir = t.testdir({});
  const store = await openStore(databasePath(dir), new FakeClock(Date.now()), { idleMs: 1, absoluteMs: 1 }, new SecretBox(randomBytes(32)));
  t.teardown(() => store.close());
  const acme = (await store.tenants.create('acme')).id;
  const globex = (await store.tenants.create('globex')).id;
  const [old] = await store.events.append(acme, [{ type: 'call.initiated', callId: 'call_0', data: {} }]);

  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/vgw.ts', 'events', 'tail', acme, '--type', 'call.transfer.*'], {
    env: { ...process.env, VGW_DATA_DIR: dir, VGW_CONFIG: '' }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL'); });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { err += d.toString(); });
  const until = async (check: () => boolean, what: string) => {
    const end = Date.now() + 20_000;
    while (!check()) {
      if (Date.now() > end || child.exitCode !== null) throw new Error(`waiting for ${what}: ${out} ${err}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  await until(() => err.includes('data folder'), 'the CLI to start');
  await new Promise((r) => setTimeout(r, 1500));
  const events = [
    ...await store.events.append(acme, [{ type: 'call.answered', callId: 'call_1', data: {} }]),
    ...await store.events.append(acme, [{ type: 'call.transfer.started', callId: 'call_1', data: {} }]),
    ...await store.events.append(globex, [{ type: 'call.transfer.started', callId: 'call_9', data: {} }]),
    ...await store.events.append(acme, [{ type: 'call.transfer.connected', callId: 'call_1', data: {} }]),
  ];
  await until(() => out.trim().split('\n').filter(Boolean).length >= 2, 'two lines');
  await new Promise((r) => setTimeout(r, 700));
  const lines = out.trim().split('\n').map((l) => JSON.parse(l) as { id: string; type: string });
  t.same(lines.map((l) => l.id), [events[1]!.id, events[3]!.id], 'the tenant\'s transfer events, in order, each once');
  t.notOk(out.includes(old!.id), 'events logged before it started are not printed without --from-start');
  child.kill('SIGINT');
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  t.equal(code, 0, 'a clean exit on SIGINT');
});
