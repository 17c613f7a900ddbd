/**
 * docs/CLUSTER.md "Try it: npm run cluster": the script starts PostgreSQL, Redis, the Kamailio edge,
 * two engines and an API process on loopback, prints the API's address and a sandbox key once all
 * of them answer; the API serves the tenant and places a sandbox call on an engine; `vgw cluster
 * status` shows both engines live; Ctrl-C (SIGINT to its process group) stops every process it printed, and its run folder is
 * removed with nothing left running from it.
 */
import t from 'tap';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { answersOptions } from '../../scripts/cluster-processes.js';
import { missingPackages, ROOT } from '../../scripts/cluster-services.js';
import { FakeCustomAgent } from '../support/fake-agent-servers/custom-agent-server.js';
import { waitFor } from '../support/gateway-harness.js';
import { missingPeer } from '../support/peers.js';

t.setTimeout(480_000);

const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
};

/** Processes whose command line names `folder`: Kamailio's children, say, which the script did not print. */
function processesNaming(folder: string): number[] {
  return readdirSync('/proc').filter((d) => /^\d+$/.test(d)).flatMap((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(folder) ? [Number(pid)] : [];
    } catch {
      return []; // gone meanwhile
    }
  });
}

function cli(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src', 'cli', 'vgw.ts'), ...args], { cwd: ROOT, env: { ...process.env, VGW_CONFIG: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { err += d.toString(); });
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, out, err })));
}

t.test('docs/CLUSTER.md "Try it: npm run cluster": the whole cluster on loopback, then stopped and removed on Ctrl-C', async (t) => {
  const missing = missingPackages();
  if (missing.length > 0) return missingPeer(t, `needs ${missing.join(', ')} (apt-get install ${missing.join(' ')})`);

  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('VGW_')));
  // As an operator runs it: `npm run cluster` in a process group of its own, which a terminal's
  // Ctrl-C signals as a whole (npm, tsx and the script each get the SIGINT).
  const child = spawn('npm', ['run', '-s', 'cluster'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const ctrlC = (): void => { process.kill(-child.pid!, 'SIGINT'); };
  let output = '';
  child.stdout.on('data', (d: Buffer) => { output += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { output += d.toString(); });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // Should an assertion throw before the SIGINT below, the script still cleans up after itself.
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) ctrlC(); return exited; });

  await waitFor('the cluster to be ready', () => child.exitCode === null ? /Ctrl-C stops everything/.test(output) : Promise.reject(new Error(output)), 360_000);
  const runDir = /run folder (\S+)/.exec(output)![1]!;
  const apiBase = /^API:\s+(http:\/\/127\.0\.0\.1:\d+)/m.exec(output)![1]!;
  const key = /^sandbox key: (vgw_test_\w+)/m.exec(output)![1]!;
  const edgePort = Number(/^SIP edge:\s+sip:127\.0\.0\.1:(\d+)/m.exec(output)![1]);
  const databaseUrl = /VGW_DATABASE_URL=(\S+)/.exec(output)![1]!;
  const redisUrl = /VGW_REDIS_URL=(\S+)/.exec(output)![1]!;
  const pids = [...output.matchAll(/^ {2}(\S+)\s+pid (\d+)/gm)].map((m) => ({ name: m[1]!, pid: Number(m[2]) }));
  t.same(pids.map((p) => p.name), ['postgres', 'redis', 'edge', 'engine-a', 'engine-b', 'api'], 'every part printed with its pid, in start order');
  t.ok(pids.every((p) => isRunning(p.pid)), 'and running');
  t.ok(existsSync(runDir), `run folder ${runDir}`);

  t.equal((await fetch(`${apiBase}/readyz`)).status, 200, 'the API process is ready');
  const auth = { authorization: `Bearer ${key}` };
  const calls = await fetch(`${apiBase}/v1/calls`, { headers: auth });
  t.equal(calls.status, 200, 'the printed sandbox key is accepted');
  t.same(((await calls.json()) as { data: unknown[] }).data, [], 'no live call yet');
  for (const engine of output.matchAll(/^ {2}(engine-\w)\s+pid \d+.*?(http:\/\/127\.0\.0\.1:\d+), internal/gm)) {
    t.equal((await fetch(`${engine[2]}/readyz`)).status, 200, `${engine[1]} is ready`);
  }
  t.ok(await answersOptions('127.0.0.1', edgePort), 'the edge answers OPTIONS');

  // A sandbox call through the API lands on an engine and is hung up through it.
  const bot = await FakeCustomAgent.start();
  t.teardown(() => bot.core.close());
  const placed = await fetch(`${apiBase}/v1/calls`, {
    method: 'POST', headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ from: '+15550100', to: '+15550199', carrier: 'sandbox', agent_ws_url: bot.url }),
  });
  const call = (await placed.json()) as { id: string };
  t.equal(placed.status, 200, JSON.stringify(call));
  await waitFor('the sandbox call to be answered', async () => ((await (await fetch(`${apiBase}/v1/calls/${call.id}`, { headers: auth })).json()) as { state: string }).state === 'active', 30_000);
  const hung = await fetch(`${apiBase}/v1/calls/${call.id}/hangup`, { method: 'POST', headers: auth });
  t.equal(hung.status, 200, 'hung up through the API process');

  const status = await cli(['cluster', 'status', '--json'], { VGW_DATABASE_URL: databaseUrl, VGW_REDIS_URL: redisUrl });
  t.equal(status.code, 0, status.err);
  const nodes = (JSON.parse(status.out) as { nodes: { id: string; state: string; source: string }[] }).nodes;
  t.same(nodes.map((n) => [n.id, n.state, n.source]), [['node-a', 'live', 'redis'], ['node-b', 'live', 'redis']], 'vgw cluster status shows both engines live, from their leases in Redis');

  ctrlC();
  // npm's own exit code after a SIGINT is npm's affair; the script's cleanup is what is checked.
  await exited;
  t.match(output, /stopping api[\s\S]*stopping engine-b[\s\S]*stopping engine-a[\s\S]*stopping edge[\s\S]*stopping redis[\s\S]*stopping postgres[\s\S]*cluster stopped/, 'stopped in reverse order');
  t.same(pids.filter((p) => isRunning(p.pid)).map((p) => p.name), [], 'every printed process is gone');
  t.same(processesNaming(runDir), [], 'nothing left running from the run folder (the edge\'s children included)');
  t.notOk(existsSync(runDir), 'the run folder is removed');
});
