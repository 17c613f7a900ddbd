/**
 * @module `npm run bench:sip`: sipp's built-in uac at rising call rates against the SIP stack
 * answering with a fixed SDP (INVITE, 100, 200, ACK, BYE, 200), then the best rate held, then the
 * heap cost of idle confirmed dialogs. Results are printed and written to docs/PERFORMANCE.md.
 *
 * The target rate (500 calls/s) is also held on its own, since the latency target is judged there.
 *
 * Environment: BENCH_SIP_RATES (comma list, default 200,400,600,800,1000,1200,1600,2000),
 * BENCH_SIP_SWEEP_SECONDS (default 15), BENCH_SIP_HOLD_SECONDS (default 60), BENCH_SIP_IDLE_DIALOGS
 * (default 2000), BENCH_SIP_NO_DOC=1 (print only).
 */
import { readdirSync, readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { freePort, startSipp, TEST_SDP } from '../../test/support/sip-sipp.js';
import type * as SipModule from '../../src/engine/sip/index.js';
import type { SipUserAgent } from '../../src/engine/sip/index.js';
import type * as TransportLayerModule from '../../src/engine/sip/transport/transport-layer.js';
import { compiled } from '../compiled.js';
import { writePerformanceSection, machineDescription } from './performance-doc.js';

setFlagsFromString('--expose_gc');
const gc = runInNewContext('gc') as () => void;

const RATES = (process.env.BENCH_SIP_RATES ?? '200,400,600,800,1000,1200,1600,2000').split(',').map(Number);
/** The rate target; its p99 target is judged at this rate. */
export const TARGET_RATE = 500;
const SWEEP_SECONDS = Number(process.env.BENCH_SIP_SWEEP_SECONDS ?? 15);
const HOLD_SECONDS = Number(process.env.BENCH_SIP_HOLD_SECONDS ?? 60);
const IDLE_DIALOGS = Number(process.env.BENCH_SIP_IDLE_DIALOGS ?? 2000);

const teardowns: (() => void | Promise<void>)[] = [];
const scope = { teardown: (fn: () => void | Promise<void>) => void teardowns.push(fn) };

/** One sipp run's figures. */
export interface RunResult {
  rate: number;
  seconds: number;
  successful: number;
  failed: number;
  retransmissions: number;
  p50: number;
  p99: number;
  /** Gateway process CPU, in percent of one core, over the run. */
  cpu: number;
  /** The gateway's event-loop delay over the run (ms): how long a ready message could wait for the process itself. */
  loopP99: number;
  loopMax: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

function statColumn(csv: string, name: string): number {
  const lines = csv.trim().split('\n');
  const head = (lines[0] ?? '').split(';');
  const last = (lines[lines.length - 1] ?? '').split(';');
  return Number(last[head.indexOf(name)] ?? NaN);
}

async function runRate(udpPort: number, rate: number, seconds: number): Promise<RunResult> {
  const cwd = mkdtempSync(join(tmpdir(), 'vgw-bench-sip-'));
  const total = rate * seconds;
  const cpu0 = process.cpuUsage();
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const t0 = performance.now();
  const run = startSipp(scope, cwd, [
    '-sn', 'uac', `127.0.0.1:${udpPort}`, '-i', '127.0.0.1', '-p', String(await freePort()),
    '-r', String(rate), '-m', String(total), '-d', '0', '-l', String(rate * 4),
    '-recv_timeout', '10000', '-timeout', `${seconds + 60}s`,
    '-trace_rtt', '-rtt_freq', String(Math.max(1, rate)), '-trace_stat', '-fd', '1',
  ]);
  await run.done;
  loop.disable();
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const files = readdirSync(cwd);
  const rttFile = files.find((f) => f.endsWith('_rtt.csv'));
  const statFile = files.find((f) => f.endsWith('_.csv'));
  const rtts = rttFile
    ? readFileSync(join(cwd, rttFile), 'utf8').trim().split('\n').slice(1).map((l) => Number(l.split(';')[1])).filter(Number.isFinite).sort((a, b) => a - b)
    : [];
  const stat = statFile ? readFileSync(join(cwd, statFile), 'utf8') : '';
  rmSync(cwd, { recursive: true, force: true });
  return {
    rate, seconds,
    successful: statColumn(stat, 'SuccessfulCall(C)'),
    failed: statColumn(stat, 'FailedCall(C)'),
    retransmissions: statColumn(stat, 'Retransmissions(C)'),
    p50: percentile(rtts, 50), p99: percentile(rtts, 99),
    cpu: ((cpu.user + cpu.system) / 1000 / wallMs) * 100,
    loopP99: loop.percentile(99) / 1e6, loopMax: loop.max / 1e6,
  };
}

/** The SIP stack from the build on the product TransportLayer, UDP and TCP on 127.0.0.1. */
async function startCompiledUa(): Promise<{ ua: SipUserAgent; udpPort: number }> {
  const sip = await compiled<typeof SipModule>('engine/sip/index.js');
  const { TransportLayer } = await compiled<typeof TransportLayerModule>('engine/sip/transport/transport-layer.js');
  // The layer needs its delegate before the UA exists, and the UA needs the layer.
  const up: { ua?: SipUserAgent } = {};
  const layer = new TransportLayer({
    listen: [{ protocol: 'UDP', host: '127.0.0.1', port: 0 }, { protocol: 'TCP', host: '127.0.0.1', port: 0 }],
    delegate: { onMessage: (m, s) => up.ua?.receive(m, s) },
  });
  await layer.start();
  const ua = new sip.SipUserAgent({ transport: layer, userAgent: 'voice-gateway-bench' });
  up.ua = ua;
  scope.teardown(async () => {
    ua.dispose();
    await layer.stop();
  });
  return { ua, udpPort: layer.localAddress('UDP').port };
}

/** Holds `n` confirmed dialogs idle and returns the heap growth per dialog in bytes. */
async function idleDialogCost(ua: SipUserAgent, udpPort: number, n: number): Promise<number> {
  gc();
  const before = process.memoryUsage().heapUsed;
  const cwd = mkdtempSync(join(tmpdir(), 'vgw-bench-sip-idle-'));
  const run = startSipp(scope, cwd, ['-sn', 'uac', `127.0.0.1:${udpPort}`, '-i', '127.0.0.1', '-p', String(await freePort()), '-r', '500', '-m', String(n), '-d', '600000', '-l', String(n)]);
  // Wait for every dialog, then for the INVITE transactions to end (Timer L, 64*T1 = 32 s).
  while (ua.dialogCount < n) await new Promise((r) => setTimeout(r, 250));
  while (ua.core.transactionCount > 0) await new Promise((r) => setTimeout(r, 500));
  gc();
  const after = process.memoryUsage().heapUsed;
  run.child.kill('SIGKILL');
  await run.done;
  rmSync(cwd, { recursive: true, force: true });
  return (after - before) / n;
}

function line(r: RunResult): string {
  return `| ${r.rate} | ${r.seconds} | ${r.successful} | ${r.failed} | ${r.retransmissions} | ${r.p50} | ${r.p99} | ${r.cpu.toFixed(0)} % | ${r.loopP99.toFixed(1)} / ${r.loopMax.toFixed(0)} |`;
}

async function main(): Promise<void> {
  const loadAtStart = loadavg()[0] ?? 0;
  const { ua, udpPort } = await startCompiledUa();
  const transport = { udpPort };
  ua.events.on('invite', (call) => call.accept(TEST_SDP));
  const sweep: RunResult[] = [];
  for (const rate of RATES) {
    const r = await runRate(transport.udpPort, rate, SWEEP_SECONDS);
    sweep.push(r);
    console.log(line(r));
    if (r.failed > 0 || r.successful < rate * SWEEP_SECONDS) break;
    await new Promise((res) => setTimeout(res, 3000));
  }
  const passing = sweep.filter((r) => r.failed === 0 && r.successful === r.rate * r.seconds);
  let held: RunResult | undefined;
  for (const candidate of [...passing].reverse()) {
    await new Promise((res) => setTimeout(res, 5000));
    const r = await runRate(transport.udpPort, candidate.rate, HOLD_SECONDS);
    console.log(line(r));
    if (r.failed === 0 && r.successful === r.rate * r.seconds) {
      held = r;
      break;
    }
  }
  await new Promise((res) => setTimeout(res, 5000));
  while (ua.core.transactionCount > 0) await new Promise((r) => setTimeout(r, 500));
  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  const atTarget = await runRate(transport.udpPort, TARGET_RATE, HOLD_SECONDS);
  console.log(line(atTarget));
  gc();
  const transactions = ua.core.transactionCount;
  const lingering = { transactions, bytesEach: (process.memoryUsage().heapUsed - heapBefore) / Math.max(1, transactions) };
  console.log(`after the target run: ${transactions} server transactions alive, ${(lingering.bytesEach / 1024).toFixed(2)} KiB of heap each`);
  // Let the last calls' transactions end before measuring idle dialogs.
  while (ua.core.transactionCount > 0) await new Promise((r) => setTimeout(r, 500));
  const perDialog = await idleDialogCost(ua, transport.udpPort, IDLE_DIALOGS);
  console.log(`idle dialog: ${(perDialog / 1024).toFixed(2)} KiB each over ${IDLE_DIALOGS}`);
  for (const fn of teardowns.reverse()) await fn();
  if (process.env.BENCH_SIP_NO_DOC !== '1') writePerformanceSection({ machine: machineDescription(), sweep, held, atTarget, perDialogBytes: perDialog, idleDialogs: IDLE_DIALOGS, lingering, sweepSeconds: SWEEP_SECONDS, holdSeconds: HOLD_SECONDS, loadAverages: [loadAtStart, loadavg()[0] ?? 0] });
}

await main();
