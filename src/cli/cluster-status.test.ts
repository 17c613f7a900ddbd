/**
 * docs/CLUSTER.md "Operating it": `vgw cluster status` shows every engine the store knows, live,
 * draining or dead (not seen within the API's liveness window), when it was last seen, its live
 * calls, and the total of live calls on the engines that are not dead; on SQLite and, when a
 * server is given, PostgreSQL. The CLI itself prints the table, or JSON with --json, and creates
 * no master key where it is run.
 */
import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { FakeClock } from '../common/clock.js';
import { SecretBox } from '../common/secret-box.js';
import { NODE_LIVE_WITHIN_MS } from '../gateway/node-presence.js';
import { databasePath, openStore, type Store } from '../storage/index.js';
import { BACKENDS, storeLocation } from '../../test/support/postgres.js';
import { clusterStatus, formatClusterStatus, storeNodeSource, type ClusterStatus } from './cluster-status.js';

const START = Date.parse('2026-03-01T10:00:00.000Z');

async function storeAt(t: Test, location: string, clock: FakeClock): Promise<Store> {
  const store = await openStore(location, clock, { idleMs: 1, absoluteMs: 1 }, new SecretBox(randomBytes(32)));
  t.teardown(() => store.close());
  return store;
}

/** node-c announced itself long ago and went silent; node-b drains; node-a is live. */
async function threeEngines(store: Store, clock: FakeClock): Promise<void> {
  await store.nodes.register({ id: 'node-c', internalUrl: 'http://127.0.0.1:9003', liveCalls: 4 });
  clock.advance(NODE_LIVE_WITHIN_MS + 5_000);
  await store.nodes.register({ id: 'node-a', internalUrl: 'http://127.0.0.1:9001', liveCalls: 0 });
  await store.nodes.register({ id: 'node-b', internalUrl: 'http://127.0.0.1:9002', liveCalls: 0 });
  clock.advance(1_000);
  await store.nodes.refresh('node-a', 3);
  await store.nodes.refresh('node-b', 2);
  await store.nodes.drain('node-b');
}

for (const backend of BACKENDS) {
  t.test(`docs/CLUSTER.md "Operating it": live, draining and dead engines from the store's nodes (${backend})`, async (t) => {
    const location = await storeLocation(t, backend);
    if (location === undefined) return t.end();
    const clock = new FakeClock(START);
    const store = await storeAt(t, location, clock);
    t.same(await clusterStatus([storeNodeSource(store)], clock.now()), { nodes: [], live_calls: 0, live_nodes: 0, draining_nodes: 0, dead_nodes: 0 }, 'no engine yet');

    await threeEngines(store, clock);
    clock.advance(2_500);
    const status = await clusterStatus([storeNodeSource(store)], clock.now());
    t.same(status.nodes.map((n) => [n.id, n.state, n.live_calls, n.seen_seconds_ago]), [
      ['node-a', 'live', 3, 2],
      ['node-b', 'draining', 2, 2],
      ['node-c', 'dead', 4, Math.floor((NODE_LIVE_WITHIN_MS + 8_500) / 1000)],
    ]);
    t.match(status.nodes[0], { internal_url: 'http://127.0.0.1:9001', capacity: null, last_seen: new Date(START + NODE_LIVE_WITHIN_MS + 6_000).toISOString(), source: 'store' });
    t.equal(status.live_calls, 5, "a dead engine's last count is not counted as live calls");
    t.match(status, { live_nodes: 1, draining_nodes: 1, dead_nodes: 1 });

    // The liveness window is the API's: a node just inside it is live, just outside it dead.
    clock.advance(NODE_LIVE_WITHIN_MS - 2_500);
    t.equal((await clusterStatus([storeNodeSource(store)], clock.now())).nodes[0]!.state, 'live', 'seen exactly the window ago: live');
    clock.advance(1);
    t.equal((await clusterStatus([storeNodeSource(store)], clock.now())).nodes[0]!.state, 'dead', 'one millisecond more: dead');

    // A stopped engine removes its row: it is no longer listed at all.
    await store.nodes.remove('node-c');
    t.same((await clusterStatus([storeNodeSource(store)], clock.now())).nodes.map((n) => n.id), ['node-a', 'node-b']);
  });
}

t.test('docs/CLUSTER.md "Operating it": with two sources, a node both report is shown as the first has it', async (t) => {
  const clock = new FakeClock(START);
  const first = await storeAt(t, ':memory:', clock);
  const second = await storeAt(t, ':memory:', clock);
  await first.nodes.register({ id: 'node-a', internalUrl: 'http://127.0.0.1:9001', liveCalls: 7 });
  await second.nodes.register({ id: 'node-a', internalUrl: 'http://127.0.0.1:9999', liveCalls: 1 });
  await second.nodes.register({ id: 'node-b', internalUrl: 'http://127.0.0.1:9002', liveCalls: 2 });
  const status = await clusterStatus([{ ...storeNodeSource(first), name: 'first' }, { ...storeNodeSource(second), name: 'second' }], clock.now());
  t.same(status.nodes.map((n) => [n.id, n.live_calls, n.source]), [['node-a', 7, 'first'], ['node-b', 2, 'second']]);
  t.equal(status.live_calls, 9);
});

t.test('docs/CLUSTER.md "Operating it": the table names each node, its state, calls and the total', (t) => {
  const status: ClusterStatus = {
    nodes: [
      { id: 'node-a', state: 'live', internal_url: 'http://127.0.0.1:9001', live_calls: 3, capacity: 500, last_seen: '', seen_seconds_ago: 1, source: 'redis' },
      { id: 'node-b', state: 'draining', internal_url: 'http://127.0.0.1:9002', live_calls: 12, capacity: null, last_seen: '', seen_seconds_ago: 0, source: 'store' },
    ],
    live_calls: 15, live_nodes: 1, draining_nodes: 1, dead_nodes: 0,
  };
  const lines = formatClusterStatus(status).split('\n');
  t.match(lines[0], /^NODE\s+STATE\s+LAST SEEN\s+CALLS\s+CAPACITY\s+INTERNAL URL\s+SOURCE$/);
  t.match(lines[1], /^node-a\s+live\s+1s ago\s+3\s+500\s+http:\/\/127\.0\.0\.1:9001\s+redis$/);
  t.match(lines[2], /^node-b\s+draining\s+0s ago\s+12\s+-\s+http:\/\/127\.0\.0\.1:9002\s+store$/);
  t.equal(lines[4], '15 live calls on 1 live and 1 draining engines; 0 dead');
  t.equal(formatClusterStatus({ nodes: [], live_calls: 0, live_nodes: 0, draining_nodes: 0, dead_nodes: 0 }), 'no engine has announced itself\n');
  t.end();
});

function runVgw(dataDir: string, cwd: string, args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'vgw.ts'), ...args], {
    cwd, env: { ...process.env, VGW_DATA_DIR: dataDir, VGW_CONFIG: '', VGW_SECRET_KEY: '', VGW_DATABASE_URL: '' }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { err += d.toString(); });
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, out, err })));
}

t.test('docs/CLUSTER.md "Operating it": vgw cluster status, as a table and with --json, beside the store', async (t) => {
  const dir = t.testdir({ data: {}, elsewhere: {} });
  const dataDir = join(dir, 'data');
  // Rows stamped two minutes ahead: however slowly the CLI starts, they are still within the window.
  const clock = new FakeClock(Date.now() + 120_000);
  const store = await storeAt(t, databasePath(dataDir), clock);
  await store.nodes.register({ id: 'node-a', internalUrl: 'http://127.0.0.1:9001', liveCalls: 2 });
  await store.nodes.register({ id: 'node-b', internalUrl: 'http://127.0.0.1:9002', liveCalls: 1 });
  await store.nodes.drain('node-b');

  const json = await runVgw(dataDir, join(dir, 'elsewhere'), ['cluster', 'status', '--json']);
  t.equal(json.code, 0, json.err);
  const parsed = JSON.parse(json.out) as ClusterStatus;
  t.same(parsed.nodes.map((n) => [n.id, n.state, n.live_calls]), [['node-a', 'live', 2], ['node-b', 'draining', 1]]);
  t.equal(parsed.live_calls, 3);

  const table = await runVgw(dataDir, join(dir, 'elsewhere'), ['cluster', 'status']);
  t.equal(table.code, 0, table.err);
  t.match(table.out, /^node-a\s+live\s+0s ago\s+2\s+-\s+http:\/\/127\.0\.0\.1:9001\s+store$/m);
  t.match(table.out, /^3 live calls on 1 live and 1 draining engines; 0 dead$/m);
  t.notOk(existsSync(join(dataDir, 'master.key')) || existsSync(join(dir, 'elsewhere', 'data')), 'no master key created by a status read');

  const usage = await runVgw(dataDir, dir, ['cluster', 'status', 'extra']);
  t.equal(usage.code, 2, 'a stray argument is a usage error');
});
