/**
 * @module `npm run bench:media`: bridged G.711 calls on loopback through our relay and through
 * rtpengine 10.5 userspace, one after the other with the same load. Each relay runs in its own
 * process and the load generator in another; relay CPU comes from /proc/PID/stat over the steady
 * window. Results go to stdout and to docs/PERFORMANCE.md.
 *
 * Environment: BENCH_CALLS (a list, 100,400), BENCH_RUNS (3), BENCH_WINDOW_S (20), BENCH_WARMUP_S (5),
 * BENCH_TARGETS (ours,ours-rt,ours-loop,ours-dgram,naive,c-floor,rtpengine,rtpengine-rt,direct; ours-rt is ours with its relay thread
 * in SCHED_RR 10 (rtp.relay_thread_priority), rtpengine-rt rtpengine with --scheduling=rr --priority=10, ours-loop ours without the
 * relay thread; c-floor is bench/media/c-forwarder.c), BENCH_NO_WRITE=1 to leave the docs alone,
 * BENCH_MEDIA_JSON=FILE to save the run's figures; `--from-json FILE` writes the section from a saved run without measuring;
 * for the relay worker BENCH_RTCP_MS (5000), BENCH_MUX_ONLY=1 and BENCH_LOOP_BUSY_MS (N ms of JavaScript every 20 ms on its loop); BENCH_PROFILE=DIR for a CPU profile,
 * BENCH_RELAY_NODE_ARGS for more node flags.
 */
import { execFileSync, fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildProduct } from '../compiled.js';
import { NgClient } from './ng-client.js';
import type { CallEndpoints, RelayPorts, WindowResult } from './protocol.js';
import { writePerformanceSection, type BenchReport, type ConfigResult, type Summary } from './report.js';

type Target = 'ours' | 'ours-rt' | 'ours-loop' | 'ours-dgram' | 'naive' | 'c-floor' | 'rtpengine' | 'rtpengine-rt' | 'direct';

const CALL_COUNTS = (process.env.BENCH_CALLS ?? '100,400').split(',').map(Number);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const WINDOW_S = Number(process.env.BENCH_WINDOW_S ?? 20);
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 5);
const TARGETS = (process.env.BENCH_TARGETS ?? 'ours,ours-rt,ours-loop,ours-dgram,naive,c-floor,rtpengine,rtpengine-rt,direct').split(',') as Target[];
const NG_PORT = 22222;
const CLK_TCK = 100;
const here = (file: string): string => fileURLToPath(new URL(file, import.meta.url));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** One measured window of one target. */
export interface RunResult extends WindowResult {
  target: Target;
  relayCpuMs: number;
  genCpuMs: number;
  /** One-minute load average at the end of the window: how busy the shared machine was. */
  load: number;
}

/** Resolves with the next IPC message of `type` from `child`. */
function nextMessage<T>(child: ChildProcess, type: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (msg: { type: string; message?: string }): void => {
      if (msg.type === 'error') reject(new Error(msg.message));
      if (msg.type !== type) return;
      child.off('message', onMessage);
      resolve(msg as T);
    };
    child.on('message', onMessage);
  });
}

function forkTs(file: string, profile = false, env: NodeJS.ProcessEnv = {}): ChildProcess {
  // Before the first fork, so the relay worker loads a fresh build (its children inherit that it is built).
  buildProduct();
  // BENCH_PROFILE=DIR writes a V8 CPU profile of the relay worker there (open it in Chrome DevTools).
  const prof = profile && process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
  // BENCH_RELAY_NODE_ARGS: more node flags for the relay worker (say --trace-gc).
  if (profile && process.env.BENCH_RELAY_NODE_ARGS) prof.push(...process.env.BENCH_RELAY_NODE_ARGS.split(' '));
  return fork(here(file), [], { execArgv: ['--import', 'tsx', ...prof], stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, ...env } });
}

/** utime + stime of a process, in milliseconds (fields 14 and 15 of /proc/PID/stat). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
}

/** Starts our relay worker and bridges every call. */
async function startOurs(endpoints: CallEndpoints[], worker = './relay-worker.ts', env: NodeJS.ProcessEnv = {}): Promise<{ child: ChildProcess; relay: RelayPorts[] }> {
  const child = forkTs(worker, true, env);
  await nextMessage(child, 'started');
  const ready = nextMessage<{ relay: RelayPorts[] }>(child, 'ready');
  child.send({ type: 'setup', calls: endpoints });
  return { child, relay: (await ready).relay };
}

const sdpFor = (port: number): string =>
  ['v=0', 'o=- 1 1 IN IP4 127.0.0.1', 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', `m=audio ${port} RTP/AVP 0`, 'a=rtpmap:0 PCMU/8000', 'a=sendrecv', ''].join('\r\n');
const asString = (v: unknown): string => (typeof v === 'string' ? v : '');
const portOf = (sdp: string): number => Number(/m=audio (\d+)/.exec(sdp)?.[1]);

/** The real-time priority of ours-rt's relay thread and rtpengine-rt's threads. */
const RT_PRIORITY = 10;

/** Starts rtpengine userspace (docs/PERFORMANCE.md "Media relay (npm run bench:media)") and sets every call up over ng. */
async function startRtpengine(endpoints: CallEndpoints[], extra: string[] = []): Promise<{ child: ChildProcess; relay: RelayPorts[] }> {
  const child = spawn('rtpengine', [
    '--config-file=none', '--table=-1', '--interface=127.0.0.1', `--listen-ng=127.0.0.1:${NG_PORT}`,
    '--foreground', '--log-stderr', '--log-level=3', '--port-min=28000', '--port-max=31999', ...extra,
  ], { stdio: 'ignore' });
  const ng = await NgClient.open(NG_PORT);
  for (let i = 0; ; i++) {
    try {
      await ng.command({ command: 'ping' }, 500);
      break;
    } catch (err) {
      if (i > 20) throw err;
    }
  }
  const relay: RelayPorts[] = [];
  for (const [i, e] of endpoints.entries()) {
    const ids = { 'call-id': `bench-${i}`, 'from-tag': `caller-${i}` };
    const offer = await ng.command({ command: 'offer', ...ids, sdp: sdpFor(e.caller) });
    const answer = await ng.command({ command: 'answer', ...ids, 'to-tag': `callee-${i}`, sdp: sdpFor(e.callee) });
    if (offer.result !== 'ok' || answer.result !== 'ok') throw new Error(`rtpengine refused call ${i}: ${JSON.stringify([offer, answer])}`);
    relay.push({ calleeTarget: portOf(asString(offer.sdp)), callerTarget: portOf(asString(answer.sdp)) });
  }
  ng.close();
  return { child, relay };
}

let cForwarder: string | undefined;

/** Builds bench/media/c-forwarder.c (cc, as the addon's build needs anyway) and starts it on every call. */
async function startCFloor(endpoints: CallEndpoints[]): Promise<{ child: ChildProcess; relay: RelayPorts[] }> {
  if (cForwarder === undefined) {
    cForwarder = join(mkdtempSync(join(tmpdir(), 'vgw-bench-')), 'c-forwarder');
    execFileSync('cc', ['-O2', '-o', cForwarder, here('./c-forwarder.c')]);
  }
  const child = spawn(cForwarder, ['20000', ...endpoints.flatMap((e) => [String(e.caller), String(e.callee)])], { stdio: ['ignore', 'pipe', 'inherit'] });
  let text = '';
  const relay = await new Promise<RelayPorts[]>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`c-forwarder exited with ${code}`)));
    child.stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const lines = text.split('\n').filter((line) => line.length > 0);
      if (lines.length < endpoints.length) return;
      resolve(lines.map((line) => {
        const [callerTarget, calleeTarget] = line.split(' ').map(Number);
        return { callerTarget: callerTarget!, calleeTarget: calleeTarget! };
      }));
    });
  });
  return { child, relay };
}

async function runOnce(target: Target, calls: number): Promise<RunResult> {
  const gen = forkTs('./load-gen.ts');
  await nextMessage(gen, 'ready');
  const opened = nextMessage<{ endpoints: CallEndpoints[] }>(gen, 'endpoints');
  gen.send({ type: 'open', calls });
  const { endpoints } = await opened;
  const started =
    target === 'ours' ? await startOurs(endpoints, './relay-worker.ts', { BENCH_MEDIA_IO: 'native' })
      : target === 'ours-rt' ? await startOurs(endpoints, './relay-worker.ts', { BENCH_MEDIA_IO: 'native', BENCH_RELAY_PRIORITY: String(RT_PRIORITY) })
      : target === 'ours-loop' ? await startOurs(endpoints, './relay-worker.ts', { BENCH_MEDIA_IO: 'native', BENCH_RELAY_THREAD: '0' })
      : target === 'ours-dgram' ? await startOurs(endpoints, './relay-worker.ts', { BENCH_MEDIA_IO: 'dgram' })
      : target === 'naive' ? await startOurs(endpoints, './naive-relay-worker.ts')
      : target === 'c-floor' ? await startCFloor(endpoints)
      : target === 'rtpengine' ? await startRtpengine(endpoints)
      : target === 'rtpengine-rt' ? await startRtpengine(endpoints, ['--scheduling=rr', `--priority=${RT_PRIORITY}`])
        : { child: null, relay: endpoints.map((e) => ({ callerTarget: e.callee, calleeTarget: e.caller })) };
  gen.send({ type: 'start', relay: started.relay });
  await nextMessage(gen, 'started');
  await sleep(WARMUP_S * 1000);
  const pid = started.child?.pid;
  const relay0 = pid ? cpuMs(pid) : 0;
  const gen0 = cpuMs(gen.pid!);
  const result = nextMessage<{ result: WindowResult }>(gen, 'result');
  gen.send({ type: 'window', ms: WINDOW_S * 1000 });
  await sleep(WINDOW_S * 1000);
  const relayCpuMs = pid ? cpuMs(pid) - relay0 : 0;
  const genCpuMs = cpuMs(gen.pid!) - gen0;
  const window = (await result).result;
  if (target.startsWith('ours') && started.child) {
    const stats = nextMessage<{ totals: Record<string, number> }>(started.child, 'stats');
    started.child.send({ type: 'stats' });
    console.log(`  relay counters: ${JSON.stringify((await stats).totals)}`);
  }
  gen.send({ type: 'stop' });
  started.child?.kill();
  await Promise.all([exited(gen), started.child ? exited(started.child) : Promise.resolve()]);
  return { target, ...window, relayCpuMs, genCpuMs, load: loadavg()[0]! };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

function summarize(target: Target, runs: RunResult[]): Summary {
  const mine = runs.filter((r) => r.target === target);
  return {
    target,
    runs: mine.length,
    cpuMsPer1000: median(mine.map((r) => (r.relayCpuMs / r.sent) * 1000)),
    relayCores: median(mine.map((r) => r.relayCpuMs / r.windowMs)),
    generatorCores: median(mine.map((r) => r.genCpuMs / r.windowMs)),
    deliveredPct: median(mine.map((r) => (100 * r.received) / r.sent)),
    p50: median(mine.map((r) => r.p50)),
    p99: median(mine.map((r) => r.p99)),
    max: median(mine.map((r) => r.max)),
    ppsIn: median(mine.map((r) => (r.sent / r.windowMs) * 1000)),
    load: median(mine.map((r) => r.load)),
    skippedPct: median(mine.map((r) => (100 * r.skipped) / (r.sent + r.skipped))),
    perRun: mine.map((r) => ({ cpuMsPer1000: (r.relayCpuMs / r.sent) * 1000, deliveredPct: (100 * r.received) / r.sent, p99: r.p99 })),
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { 'from-json': { type: 'string' } } });
  if (values['from-json']) {
    writePerformanceSection(JSON.parse(readFileSync(values['from-json'], 'utf8')) as BenchReport);
    return;
  }
  const measuredAt = new Date().toISOString();
  const configs: ConfigResult[] = [];
  for (const calls of CALL_COUNTS) {
    const runs: RunResult[] = [];
    for (let run = 1; run <= RUNS; run++) {
      for (const target of TARGETS) {
        const r = await runOnce(target, calls);
        runs.push(r);
        console.log(`${calls} calls, run ${run} ${target.padEnd(9)} sent ${r.sent} (skipped ${r.skipped}) recv ${r.received} relay ${(r.relayCpuMs / r.windowMs).toFixed(3)} core, ` +
          `${((r.relayCpuMs / r.sent) * 1000).toFixed(3)} ms CPU/1000 pkts, p50 ${r.p50.toFixed(3)} ms p99 ${r.p99.toFixed(3)} ms, generator ${(r.genCpuMs / r.windowMs).toFixed(2)} core, load ${r.load.toFixed(1)}`);
      }
    }
    const summaries = TARGETS.map((t) => summarize(t, runs));
    console.table(summaries.map(({ perRun: _perRun, ...s }) => s));
    const ours = summaries.find((s) => s.target === 'ours');
    const theirs = summaries.find((s) => s.target === 'rtpengine');
    if (ours && theirs) console.log(`${calls} calls: CPU ratio ours/rtpengine ${(ours.cpuMsPer1000 / theirs.cpuMsPer1000).toFixed(2)}`);
    configs.push({ calls, summaries });
  }
  const report: BenchReport = { measuredAt, runs: RUNS, windowS: WINDOW_S, warmupS: WARMUP_S, cpuModel: cpus()[0]?.model ?? 'unknown', configs };
  if (process.env.BENCH_MEDIA_JSON) writeFileSync(process.env.BENCH_MEDIA_JSON, JSON.stringify(report, null, 2));
  if (process.env.BENCH_NO_WRITE !== '1') writePerformanceSection(report);
}

await main();
