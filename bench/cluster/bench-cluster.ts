/**
 * @module `npm run bench:cluster`: the cluster of docs/CLUSTER.md on loopback (PostgreSQL, Redis,
 * the Kamailio edge, engines on 127.0.0.2 and 127.0.0.3, an API process), with sipp far ends
 * echoing RTP as carriers and the calls benchmark's load agent as every call's agent. Measures, in
 * one run: the most concurrent agent calls held without audio loss by one engine, then by two
 * (same steps, same criterion), with each part's CPU; then call setups through the edge against
 * straight to the far end, on the same engine restarted with and without `sip.outbound_proxy`,
 * in alternating rounds. `--write` replaces the "Cluster: two engines behind the edge" section of
 * docs/PERFORMANCE.md; `--from-json FILE` writes it from a saved run.
 *
 * Environment: BENCH_CLUSTER_STEPS (default 20,40,80,120,160,200,240,280,320), BENCH_CLUSTER_WINDOW_S (5),
 * BENCH_CLUSTER_RAMP_RATE (calls/s while a step adds calls, 20), BENCH_CLUSTER_SETUP_CALLS (60),
 * BENCH_CLUSTER_SETUP_RATE (offered calls/s, 30), BENCH_CLUSTER_ROUNDS (rounds per path, 3),
 * BENCH_CLUSTER_ECHO_SIPPS (2), BENCH_CLUSTER_JSON (a file for the run's figures).
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Supervised } from '../../scripts/cluster-processes.js';
import { freePort } from '../../test/support/sip-sipp.js';
import { CallDriver } from '../calls/call-driver.js';
import { carriersYaml, startFarEnd, stopFarEnds, type FarEnd } from '../calls/far-ends.js';
import { load1, sleep } from '../calls/measure.js';
import { startLoadAgent } from '../calls/processes.js';
import { buildProduct } from '../compiled.js';
import { capacityRamp, setupRound, type Part, type Rig, type SetupRound } from './phases.js';
import { writeClusterSection, type ClusterReport } from './report.js';
import { startCluster, stopCluster, type Cluster } from './topology.js';

const list = (name: string, fallback: string): number[] => (process.env[name] ?? fallback).split(',').map(Number).filter((n) => n > 0);
const num = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);

const STEPS = list('BENCH_CLUSTER_STEPS', '20,40,80,120,160,200,240,280,320');
const WINDOW_S = num('BENCH_CLUSTER_WINDOW_S', 5);
const RAMP_RATE = num('BENCH_CLUSTER_RAMP_RATE', 20);
const SETUP_CALLS = num('BENCH_CLUSTER_SETUP_CALLS', 60);
const SETUP_RATE = num('BENCH_CLUSTER_SETUP_RATE', 30);
const ROUNDS = num('BENCH_CLUSTER_ROUNDS', 3);
const ECHO_SIPPS = num('BENCH_CLUSTER_ECHO_SIPPS', 2);
const THRESHOLD = 0.95;

async function startFarEnds(dir: string): Promise<FarEnd[]> {
  const farEnds: FarEnd[] = [];
  for (let i = 1; i <= ECHO_SIPPS; i += 1) {
    const cwd = join(dir, `echo-${i}`);
    mkdirSync(cwd);
    farEnds.push(startFarEnd('echo', `echo-${i}`, cwd, await freePort(), await freePort()));
  }
  await sleep(500);
  const dead = farEnds.find((f) => f.child.exitCode !== null);
  if (dead) throw new Error(`sipp for ${dead.carrier} exited: ${dead.errors()}`);
  return farEnds;
}

/** The parts whose CPU each capacity window reports; `engines`: the engine processes running. */
function parts(c: Cluster, engines: readonly Supervised[], agentPid: number, farEnds: readonly FarEnd[]): Part[] {
  return [
    ...engines.map((e) => ({ name: e.name, pgid: e.pid })),
    { name: 'api', pgid: c.api.pid }, { name: 'edge', pgid: c.edge.pid }, { name: 'redis', pgid: c.redis.pid }, { name: 'postgres', pgid: c.postgres.pid },
    { name: 'load agent', pids: [agentPid] }, { name: 'sipp far ends', pids: farEnds.map((f) => f.child.pid!) }, { name: 'driver', pids: [process.pid] },
  ];
}

/** Rounds through the edge and straight, in the order edge, direct, direct, edge, edge, direct…, so drift in the host's load falls on both. */
async function setupRounds(c: Cluster, rig: Rig): Promise<SetupRound[]> {
  const order: SetupRound['path'][] = [];
  for (let i = 0; i < ROUNDS; i += 1) order.push(...(i % 2 === 0 ? (['edge', 'direct'] as const) : (['direct', 'edge'] as const)));
  const rounds: SetupRound[] = [];
  let current: SetupRound['path'] | undefined;
  for (const path of order) {
    if (path !== current) {
      await c.startEngine(0, path === 'edge');
      current = path;
      // Warm-up after a restart, one untimed round as large as the timed ones: the first round
      // after a start was measured three times slower (code paths compiled, pools filled).
      await setupRound(rig, path, SETUP_CALLS, SETUP_RATE, c.edgeRpcUrl);
      await sleep(1000);
    }
    rounds.push(await setupRound(rig, path, SETUP_CALLS, SETUP_RATE, c.edgeRpcUrl));
    await sleep(1000);
  }
  return rounds;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { write: { type: 'boolean', default: false }, 'from-json': { type: 'string' } } });
  if (values['from-json']) {
    // Rewrites the section from a run saved with BENCH_CLUSTER_JSON, without measuring again.
    writeClusterSection(JSON.parse(readFileSync(values['from-json'], 'utf8')) as ClusterReport);
    return;
  }
  const startedAt = new Date();
  const loadAtStart = load1();
  buildProduct();
  const dir = mkdtempSync(join(tmpdir(), 'vgw-bench-cluster-'));
  // PostgreSQL runs as another user when we are root: it must reach its folder inside.
  chmodSync(dir, 0o755);
  const owned: Supervised[] = [];
  let agent: Awaited<ReturnType<typeof startLoadAgent>> | undefined;
  try {
    const farEnds = await startFarEnds(dir);
    agent = await startLoadAgent();
    const carriers = farEnds.map((f) => f.carrier);
    const cluster = await startCluster(dir, owned, carriersYaml(farEnds), carriers, 2);
    const engineA = await cluster.startEngine(0, true);
    const driver = new CallDriver(cluster.apiBase, cluster.apiKey, agent.url);
    driver.startPolling();
    const rig: Rig = { driver, agent, echoCarriers: carriers, threshold: THRESHOLD };
    console.log(`cluster up in ${dir}: api ${cluster.apiBase}, edge ${cluster.edgeSip}, ${farEnds.length} sipp far ends, load ${load1().toFixed(1)}`);

    const warm = await rig.driver.place(carriers[0]!, 10, 10);
    await driver.settle(warm, 20_000);
    await driver.hangupAll();
    agent.forgetClosed();
    await sleep(2000);

    const one = await capacityRamp(rig, parts(cluster, [engineA], agent.pid, farEnds), STEPS, RAMP_RATE, WINDOW_S * 1000, 'one engine');
    await driver.hangupAll(120_000);
    agent.forgetClosed();
    const engineB = await cluster.startEngine(1, true);
    await sleep(3000);
    const two = await capacityRamp(rig, parts(cluster, [engineA, engineB], agent.pid, farEnds), STEPS, RAMP_RATE, WINDOW_S * 1000, 'two engines');
    await driver.hangupAll(120_000);
    agent.forgetClosed();
    await engineB.stop();

    const rounds = await setupRounds(cluster, rig);
    driver.stopPolling();
    const report: ClusterReport = {
      machine: { nproc: availableParallelism(), cpu: cpus()[0]?.model.trim() ?? 'unknown', node: process.version, startedAt, loadAtStart, loadAtEnd: load1() },
      threshold: THRESHOLD, windowS: WINDOW_S, rampRate: RAMP_RATE, echoSipps: ECHO_SIPPS, setupCalls: SETUP_CALLS, setupRate: SETUP_RATE,
      one, two, rounds,
    };
    console.log(JSON.stringify(report));
    if (process.env.BENCH_CLUSTER_JSON) writeFileSync(process.env.BENCH_CLUSTER_JSON, JSON.stringify(report, null, 2));
    if (values.write) writeClusterSection(report);
  } finally {
    await stopCluster(owned);
    agent?.stop();
    stopFarEnds();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
