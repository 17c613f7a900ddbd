/**
 * @module `npm run bench:events`: what call events cost and how fast they arrive (docs/EVENTS.md).
 * The gateway in its own process places outbound calls to sipp far ends with the load agent on
 * every call, holds them, and hangs them up, in rounds that alternate between no webhook endpoint
 * and two endpoints subscribed to every event (two HTTP receivers on loopback). Each round reports
 * the gateway's CPU per call (its CPU time over the round, divided by the calls; pairs alternate
 * which round comes first, so a drift between rounds does not favour one side), and the rounds
 * with endpoints also the delivery throughput and the time from each call's `ended_at` to its
 * `call.ended` arriving at a receiver (p50, p99).
 *
 * Environment: BENCH_EVENTS_CALLS (200), BENCH_EVENTS_ROUNDS (pairs of rounds, 2), BENCH_EVENTS_HOLD_S (5),
 * BENCH_EVENTS_JSON (a file for the figures), BENCH_EVENTS_FIXED_LIMITS=1 (2 deliveries in flight per
 * endpoint and 8 per tenant whatever the endpoint's last answer: the limits before they followed it),
 * BENCH_EVENTS_GATEWAY_NODE_ARGS (extra node flags for the gateway, space-separated: `--cpu-prof`).
 */
import { createServer, type Server } from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../test/support/sip-sipp.js';
import { CallDriver } from '../calls/call-driver.js';
import { carriersYaml, startFarEnd, stopFarEnds, type FarEnd } from '../calls/far-ends.js';
import { load1, sleep } from '../calls/measure.js';
import { cpuSeconds, gatewaySource, startGatewayProcess, startLoadAgent, type GatewayProcess } from '../calls/processes.js';
import { percentile } from '../calls/api-load.js';

const num = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);
const CALLS = num('BENCH_EVENTS_CALLS', 200);
const ROUNDS = num('BENCH_EVENTS_ROUNDS', 2);
const HOLD_S = num('BENCH_EVENTS_HOLD_S', 5);
const GATEWAY_NODE_ARGS = (process.env.BENCH_EVENTS_GATEWAY_NODE_ARGS ?? '').split(' ').filter(Boolean);

interface Arrival { type: string; callId: string; endedAt: string | null; at: number }

/** An endpoint that answers 200 at once and notes each event's arrival time. */
async function receiver(): Promise<{ server: Server; url: string; arrivals: Arrival[] }> {
  const arrivals: Arrival[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type: string; data: { call?: { id: string; ended_at: string | null } } };
      arrivals.push({ type: event.type, callId: event.data.call?.id ?? '', endedAt: event.data.call?.ended_at ?? null, at });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { server, url: `http://127.0.0.1:${port}/hook`, arrivals };
}

async function api(gw: GatewayProcess, method: string, path: string, body?: unknown): Promise<{ id: string }> {
  const res = await fetch(`${gw.base}${path}`, {
    method, headers: { authorization: `Bearer ${gw.apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.status === 204 ? { id: '' } : (await res.json()) as { id: string };
}

interface Round {
  endpoints: number;
  calls: number;
  failed: number;
  /** Gateway CPU ms per call over the round (placing, holding, hanging up, and delivering). */
  cpuMsPerCall: number;
  /** Events the receivers got, per second of the round, and the round's length. */
  deliveredPerSecond: number | null;
  seconds: number;
  endedToDeliveredP50Ms: number | null;
  endedToDeliveredP99Ms: number | null;
  load: number;
}

async function round(gw: GatewayProcess, driver: CallDriver, farEnds: readonly FarEnd[], receivers: Awaited<ReturnType<typeof receiver>>[] | null): Promise<Round> {
  const ids = receivers ? await Promise.all(receivers.map((r) => api(gw, 'POST', '/v1/webhook-endpoints', { url: r.url, events: ['*'] }))) : [];
  for (const r of receivers ?? []) r.arrivals.length = 0;
  const cpu0 = cpuSeconds(gw.pid);
  const t0 = performance.now();
  const echo = farEnds.filter((f) => f.kind === 'echo');
  const placed = (await Promise.all(echo.map((f, i) => driver.place(f.carrier, Math.floor(CALLS / echo.length) + (i < CALLS % echo.length ? 1 : 0), 25 / echo.length)))).flat();
  await driver.settle(placed, 60_000);
  await sleep(HOLD_S * 1000);
  await driver.hangupAll(120_000);
  const ok = placed.filter((c) => !c.failure && c.id).map((c) => c.id!);
  // Every call's call.ended at both receivers, or 60 s.
  const deadline = Date.now() + 60_000;
  const endedAt = (r: Awaited<ReturnType<typeof receiver>>) => r.arrivals.filter((a) => a.type === 'call.ended' && ok.includes(a.callId));
  while (receivers && receivers.some((r) => endedAt(r).length < ok.length) && Date.now() < deadline) await sleep(200);
  if (!receivers) await sleep(2000);
  const seconds = (performance.now() - t0) / 1000;
  const cpuMs = (cpuSeconds(gw.pid) - cpu0) * 1000;
  const latencies = (receivers ?? []).flatMap((r) => endedAt(r).map((a) => a.at - Date.parse(a.endedAt!))).sort((a, b) => a - b);
  for (const e of ids) await api(gw, 'DELETE', `/v1/webhook-endpoints/${e.id}`);
  const delivered = (receivers ?? []).reduce((n, r) => n + r.arrivals.length, 0);
  const result: Round = {
    endpoints: ids.length, calls: ok.length, failed: placed.length - ok.length, cpuMsPerCall: cpuMs / Math.max(1, ok.length),
    deliveredPerSecond: receivers ? delivered / seconds : null, seconds,
    endedToDeliveredP50Ms: latencies.length ? percentile(latencies, 50) : null, endedToDeliveredP99Ms: latencies.length ? percentile(latencies, 99) : null, load: load1(),
  };
  console.log(`${ids.length} endpoints: ${ok.length} calls (${result.failed} failed), ${result.cpuMsPerCall.toFixed(1)} ms CPU per call`
    + (receivers ? `, ${delivered} events (${result.deliveredPerSecond!.toFixed(0)}/s over the round), ended→delivered p50 ${result.endedToDeliveredP50Ms} ms, p99 ${result.endedToDeliveredP99Ms} ms (${latencies.length} of ${ok.length * 2})` : ''));
  return result;
}

async function main(): Promise<void> {
  const startedAt = new Date();
  const dir = mkdtempSync(join(tmpdir(), 'vgw-bench-events-'));
  const source = gatewaySource(dir, undefined);
  const farEnds: FarEnd[] = [];
  for (const [kind, carrier] of [['echo', 'echo-1'], ['echo', 'echo-2'], ['ring', 'ring-1']] as const) {
    const cwd = join(dir, carrier);
    mkdirSync(cwd);
    farEnds.push(startFarEnd(kind, carrier, cwd, await freePort(), await freePort()));
  }
  const agent = await startLoadAgent();
  const receivers = [await receiver(), await receiver()];
  let gw: GatewayProcess | undefined;
  try {
    await sleep(500);
    gw = await startGatewayProcess({
      root: source.root, dir, httpPort: await freePort(), sipPort: await freePort(), carriersYaml: carriersYaml(farEnds), rtp: { min: 20000, max: 29999 }, nodeArgs: GATEWAY_NODE_ARGS,
      extraYaml: [`events:\n  allow_http: true${process.env.BENCH_EVENTS_FIXED_LIMITS === '1' ? '\n  max_in_flight_per_tenant: 8\n  max_in_flight_per_healthy_endpoint: 2' : ''}`],
    });
    const driver = new CallDriver(gw.base, gw.apiKey, agent.url);
    driver.startPolling();
    // Warm-up: code paths compiled and pools filled before anything is measured.
    await round(gw, driver, farEnds, null);
    // Pairs alternate their order (none then two, two then none, ...): a cost that drifts from one
    // round to the next (a store that grows, a host that gets busier) then weighs on both sides
    // alike instead of always on the round that comes second.
    const rounds: Round[] = [];
    for (let i = 0; i < ROUNDS; i += 1) {
      for (const withEndpoints of i % 2 === 0 ? [false, true] : [true, false]) {
        rounds.push(await round(gw, driver, farEnds, withEndpoints ? receivers : null));
        agent.forgetClosed();
      }
    }
    driver.stopPolling();
    const pairRatios = Array.from({ length: ROUNDS }, (_, i) => {
      const [with2, without] = [rounds[2 * i], rounds[2 * i + 1]].sort((a, b) => b!.endpoints - a!.endpoints) as [Round, Round];
      return with2.cpuMsPerCall / without.cpuMsPerCall;
    });
    const sorted = [...pairRatios].sort((a, b) => a - b);
    const medianRatio = (sorted[Math.floor((sorted.length - 1) / 2)]! + sorted[Math.ceil((sorted.length - 1) / 2)]!) / 2;
    console.log(`pair ratios (two endpoints / none): ${pairRatios.map((r) => r.toFixed(2)).join(', ')}; median ${medianRatio.toFixed(2)}`);
    const report = {
      machine: { nproc: availableParallelism(), cpu: cpus()[0]?.model.trim() ?? 'unknown', node: process.version, startedAt }, gateway: source.label, calls: CALLS, holdS: HOLD_S, rounds, pairRatios, medianRatio,
    };
    console.log(JSON.stringify(report));
    if (process.env.BENCH_EVENTS_JSON) writeFileSync(process.env.BENCH_EVENTS_JSON, JSON.stringify(report, null, 2));
  } finally {
    await gw?.stop();
    agent.stop();
    stopFarEnds();
    for (const r of receivers) r.server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
