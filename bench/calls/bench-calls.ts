/**
 * @module `npm run bench:calls`: the gateway in its own process placing outbound calls to sipp
 * far ends (several UAS carriers echoing RTP), each call joined to a load agent on loopback that
 * sends and counts 20 ms frames. Measures the most concurrent calls held without audio loss,
 * call setups per second, `GET /v1/calls` latency at 1,000 req/s with 1,000 live calls (against
 * an idle `GET /healthz` anchor of the same run), memory and CPU per call. `--write` replaces the
 * "Calls" section of docs/PERFORMANCE.md.
 *
 * Options: `--write`; `--gateway-rev REV` runs the gateway from that commit (git archive) instead
 * of the working tree; `--from-json FILE` writes the section from a run saved with BENCH_CALLS_JSON. Environment: BENCH_CALLS_STEPS (default 50,100,150,200,250,300,400,500),
 * BENCH_CALLS_RATES (10,20,30,40,50,60,75,100), BENCH_CALLS_MEMORY_CALLS (100), BENCH_CALLS_MEMORY_AGES (5,30,65), BENCH_CALLS_WINDOW_S (10), BENCH_CALLS_API_LIVE (1000),
 * BENCH_CALLS_API_MEDIA (100), BENCH_CALLS_API_SECONDS (15), BENCH_CALLS_ECHO_SIPPS (4),
 * BENCH_CALLS_PROFILE (a folder: the gateway writes a V8 CPU profile there when it stops),
 * BENCH_CALLS_SIP_TRACE (`off` runs the gateway without SIP traces, to compare with a run with them),
 * BENCH_CALLS_JSON (a file for the run's figures), BENCH_CALLS_GATEWAY_NODE_ARGS (extra node flags for the
 * gateway, space-separated, e.g. `--trace-gc`), BENCH_CALLS_GATEWAY_OUT (a file for the gateway's output).
 *
 * `--roles` measures the list API with calls carrying audio from one process and from an `api`
 * process beside an `engine` (roles.ts): BENCH_CALLS_ROLES_CALLS (300), BENCH_CALLS_API_SECONDS,
 * BENCH_CALLS_DATABASE_URL (a PostgreSQL URL both layouts use; default SQLite), BENCH_CALLS_API_PRIORITY
 * (a nice value, or `realtime`, for the process answering the API and the paced client measuring it).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from '../../test/support/sip-sipp.js';
import { CallDriver } from './call-driver.js';
import { carriersYaml, startFarEnd, stopFarEnds, type FarEnd } from './far-ends.js';
import { cpuMeter, load1, rssMedian, sleep } from './measure.js';
import { memoryByAge } from './memory-age.js';
import { apiRun, apiWithLiveCalls, placeMedia, ramp, setupRate, type BenchContext, type RateStep } from './phases.js';
import { gatewaySource, startGatewayProcess, startLoadAgent } from './processes.js';
import { writeCallsSection, type CallsReport } from './report.js';
import { rolesRun } from './roles.js';
import { parsePriority } from './priority.js';

const list = (name: string, fallback: string): number[] => (process.env[name] ?? fallback).split(',').map(Number).filter((n) => n > 0);
const num = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);

const STEPS = list('BENCH_CALLS_STEPS', '50,100,150,200,250,300,400,500');
const RATES = list('BENCH_CALLS_RATES', '10,20,30,40,50,60,75,100');
const MEMORY_CALLS = num('BENCH_CALLS_MEMORY_CALLS', 100);
const MEMORY_AGES = list('BENCH_CALLS_MEMORY_AGES', '5,30,65');
const WINDOW_S = num('BENCH_CALLS_WINDOW_S', 10);
const API_LIVE = num('BENCH_CALLS_API_LIVE', 1000);
const API_MEDIA = num('BENCH_CALLS_API_MEDIA', 100);
const API_SECONDS = num('BENCH_CALLS_API_SECONDS', 15);
const ECHO_SIPPS = num('BENCH_CALLS_ECHO_SIPPS', 4);
/** Where the gateway writes a V8 CPU profile when it exits (optional). */
const PROFILE_DIR = process.env.BENCH_CALLS_PROFILE;
/** Where the run's figures are saved as JSON (optional). */
const REPORT_JSON = process.env.BENCH_CALLS_JSON;
/** Extra node flags for the gateway process (optional). */
const GATEWAY_NODE_ARGS = (process.env.BENCH_CALLS_GATEWAY_NODE_ARGS ?? '').split(' ').filter(Boolean);
const API_RATE = 1000;
/** Calls per second while the ramp adds calls: well under the setup rate measured, so setup is not what the ramp tests. */
const RAMP_RATE = 25;
const SETUP_SECONDS = 10;
const HOLD_MS = 1000;
const THRESHOLD = 0.95;

async function startFarEnds(dir: string): Promise<FarEnd[]> {
  const farEnds: FarEnd[] = [];
  const kinds = [...Array.from({ length: ECHO_SIPPS }, (_, i) => ['echo', `echo-${i + 1}`] as const), ['ring', 'ring-1'] as const];
  for (const [kind, carrier] of kinds) {
    const cwd = join(dir, carrier);
    mkdirSync(cwd);
    farEnds.push(startFarEnd(kind, carrier, cwd, await freePort(), await freePort()));
  }
  await sleep(500);
  const dead = farEnds.find((f) => f.child.exitCode !== null);
  if (dead) {
    // The others are running: stopped here, since the caller's clean-up is not armed yet.
    stopFarEnds();
    throw new Error(`sipp for ${dead.carrier} exited: ${dead.errors()}`);
  }
  return farEnds;
}

/** An autocannon run with no calls live, and the gateway's CPU during it. */
async function main(): Promise<void> {
  const { values } = parseArgs({ options: { write: { type: 'boolean', default: false }, 'gateway-rev': { type: 'string' }, 'from-json': { type: 'string' }, roles: { type: 'boolean', default: false } } });
  if (values['from-json']) {
    // Rewrites the section from a saved run (BENCH_CALLS_JSON) without measuring again.
    const saved = JSON.parse(readFileSync(values['from-json'], 'utf8')) as CallsReport & { machine: { startedAt: string } };
    writeCallsSection({ ...saved, machine: { ...saved.machine, startedAt: new Date(saved.machine.startedAt) } });
    return;
  }
  // Read before anything is started, so a wrong value leaves nothing running.
  const apiPriority = parsePriority(process.env.BENCH_CALLS_API_PRIORITY);
  const startedAt = new Date();
  const loadAtStart = load1();
  const dir = mkdtempSync(join(tmpdir(), 'vgw-bench-calls-'));
  const source = gatewaySource(dir, values['gateway-rev']);
  const farEnds = await startFarEnds(dir);
  const agent = await startLoadAgent();
  if (values.roles) {
    try {
      const report = await rolesRun({
        root: source.root, dir, farEnds, agent, calls: num('BENCH_CALLS_ROLES_CALLS', 300), rate: API_RATE, seconds: API_SECONDS,
        databaseUrl: process.env.BENCH_CALLS_DATABASE_URL, nodeArgs: GATEWAY_NODE_ARGS,
        ...(apiPriority !== undefined ? { apiPriority } : {}),
      });
      const out = { machine: { nproc: availableParallelism(), cpu: cpus()[0]?.model.trim() ?? 'unknown', node: process.version, startedAt, loadAtStart, loadAtEnd: load1() }, gateway: source.label, ...report };
      console.log(JSON.stringify(out));
      if (REPORT_JSON) writeFileSync(REPORT_JSON, JSON.stringify(out, null, 2));
    } finally {
      agent.stop();
      stopFarEnds();
      rmSync(dir, { recursive: true, force: true });
    }
    return;
  }
  // A gateway that does not start must not leave the far ends and the agent running.
  const gw = await startGatewayProcess({
    root: source.root, dir, httpPort: await freePort(), sipPort: await freePort(), carriersYaml: carriersYaml(farEnds),
    rtp: { min: 20000, max: 29999 },
    nodeArgs: [...(PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : []), ...GATEWAY_NODE_ARGS],
    ...(process.env.BENCH_CALLS_GATEWAY_OUT ? { outputFile: process.env.BENCH_CALLS_GATEWAY_OUT } : {}),
    sipTrace: process.env.BENCH_CALLS_SIP_TRACE !== 'off',
  }).catch((err: unknown) => {
    agent.stop();
    stopFarEnds();
    throw err;
  });
  const stopAll = async (): Promise<void> => {
    await gw.stop();
    agent.stop();
    stopFarEnds();
  };
  try {
    const driver = new CallDriver(gw.base, gw.apiKey, agent.url);
    driver.startPolling();
    const ctx: BenchContext = {
      gw, agent, driver, echoCarriers: farEnds.filter((f) => f.kind === 'echo').map((f) => f.carrier), ringCarrier: 'ring-1',
      watched: { gateway: gw.pid, agent: agent.pid, sipps: farEnds.map((f) => f.child.pid!) }, idleRssKiB: 0, threshold: THRESHOLD,
    };
    console.log(`gateway pid ${gw.pid} (${source.label}, rtp.socket_io ${process.env.VGW_RTP_SOCKET_IO ?? 'auto'}), load agent pid ${agent.pid}, ${farEnds.length} sipp far ends`);

    // Warm-up: code paths compiled and pools filled before the idle figures are taken.
    const warm = await placeMedia(ctx, 20, 10);
    await driver.settle(warm, 20_000);
    await sleep(2000);
    await driver.hangupAll();
    agent.forgetClosed();
    await sleep(3000);
    const idleCpu = cpuMeter(ctx.watched);
    ctx.idleRssKiB = await rssMedian(gw.pid, 6, 500);
    const idleCores = idleCpu().gateway;
    console.log(`idle: rss ${(ctx.idleRssKiB / 1024).toFixed(1)} MiB, gateway ${idleCores.toFixed(3)} cores; warm-up failures ${warm.filter((c) => c.failure).length}`);

    // Memory first, while no call has run but the warm-up: pages freed by earlier calls would be
    // reused without growing RSS and hide what a call costs.
    const memory = await memoryByAge(ctx, MEMORY_CALLS, MEMORY_AGES);
    await sleep(3000);
    ctx.idleRssKiB = await rssMedian(gw.pid, 6, 500);

    const idle = { rate: API_RATE, seconds: API_SECONDS, ringing: 0, withAudio: null };
    const anchor = await apiRun(ctx, 'GET /healthz, no calls', '/healthz', idle);
    const listIdle = await apiRun(ctx, 'GET /v1/calls?limit=50, no calls', '/v1/calls?limit=50', { ...idle, key: gw.apiKey });

    const steps = await ramp(ctx, STEPS, RAMP_RATE, WINDOW_S * 1000, 300_000);
    const left = await driver.hangupAll(120_000);
    agent.forgetClosed();
    if (left > 0) console.log(`${left} calls still live after the ramp's hang-ups`);
    await sleep(3000);

    const rates: RateStep[] = [];
    for (const rate of RATES) {
      const step = await setupRate(ctx, rate, SETUP_SECONDS, HOLD_MS);
      rates.push(step);
      if (step.failed > 0) break;
      await sleep(2000);
    }

    const api = await apiWithLiveCalls(ctx, API_LIVE, API_MEDIA, API_RATE, API_SECONDS);
    driver.stopPolling();
    const report: CallsReport = {
      machine: { nproc: availableParallelism(), cpu: cpus()[0]?.model.trim() ?? 'unknown', node: process.version, startedAt, loadAtStart, loadAtEnd: load1() },
      gateway: `${source.label}, rtp.socket_io ${process.env.VGW_RTP_SOCKET_IO ?? 'auto'}`, echoSipps: ECHO_SIPPS, threshold: THRESHOLD, windowS: WINDOW_S, rampRate: RAMP_RATE,
      setupSeconds: SETUP_SECONDS, holdMs: HOLD_MS, apiRate: API_RATE, apiSeconds: API_SECONDS,
      idleRssKiB: ctx.idleRssKiB, idleCores, anchor, listIdle, steps, memory, rates, api, unansweredHangups: driver.unansweredHangups.size,
    };
    console.log(JSON.stringify(report));
    if (REPORT_JSON) writeFileSync(REPORT_JSON, JSON.stringify(report, null, 2));
    if (values.write) writeCallsSection(report);
  } catch (err) {
    console.error(`gateway log tail:\n${gw.logTail()}`);
    throw err;
  } finally {
    await stopAll();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
