/**
 * @module `npm run bench:calls -- --roles`: `GET /v1/calls?limit=50` at an even 1,000 requests/s
 * while calls carry agent audio, first from one `all` process, then from an `api` process while an
 * `engine` process on the same machine carries the calls (docs/ARCHITECTURE.md "Process roles"),
 * in one run, over the same far ends and load agent. With BENCH_CALLS_DATABASE_URL both layouts
 * run on that PostgreSQL database instead of SQLite files. With BENCH_CALLS_API_PRIORITY (a nice
 * value, or `realtime`: priority.ts) the process answering the API and the paced client
 * measuring it run at that priority.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { freePort } from '../../test/support/sip-sipp.js';
import { CallDriver } from './call-driver.js';
import type { FarEnd } from './far-ends.js';
import { carriersYaml } from './far-ends.js';
import { sleep } from './measure.js';
import { agentsUp, apiRun, placeMedia, type ApiUnderLoad, type BenchContext } from './phases.js';
import { startGatewayProcess, type GatewayProcess, type LoadAgent } from './processes.js';
import { applyPriority, type SchedulingPriority } from './priority.js';

export interface RolesOptions {
  root: string;
  dir: string;
  farEnds: readonly FarEnd[];
  agent: LoadAgent;
  /** Calls with agent audio during the measurement (300: about what one process holds). */
  calls: number;
  rate: number;
  seconds: number;
  /** A PostgreSQL URL both layouts use; undefined: SQLite in each layout's data folder. */
  databaseUrl: string | undefined;
  /** Extra node flags for every gateway process (a CPU profile). */
  nodeArgs?: string[];
  /**
   * A scheduling priority (priority.ts) for the process answering the API in both layouts, and
   * for the paced client measuring it (autocannon, for reference, runs in this process, which
   * keeps its own: the gateways it starts would inherit it). Unset: every process at the
   * priority it inherits.
   */
  apiPriority?: SchedulingPriority;
}

export interface RolesReport {
  store: 'sqlite' | 'postgres';
  calls: number;
  apiPriority: SchedulingPriority | null;
  /** One `all` process: the API shares its event loop with the calls' media. */
  single: ApiUnderLoad;
  /** The `api` process, the calls on an `engine` process beside it. */
  split: ApiUnderLoad;
  /** CPU cores the engine used over the split measurement. */
  engineCores: number;
}

/** Places `calls` media calls through `api`, waits for their agents, measures the list, hangs up. */
async function measureWith(o: RolesOptions, api: GatewayProcess, engine: GatewayProcess, label: string): Promise<{ result: ApiUnderLoad; engineCores: number }> {
  if (o.apiPriority !== undefined) applyPriority(api.pid, o.apiPriority);
  const driver = new CallDriver(api.base, api.apiKey, o.agent.url);
  driver.startPolling();
  const ctx: BenchContext = {
    gw: api, agent: o.agent, driver, echoCarriers: o.farEnds.filter((f) => f.kind === 'echo').map((f) => f.carrier), ringCarrier: 'ring-1',
    watched: { gateway: engine.pid, agent: o.agent.pid, sipps: o.farEnds.map((f) => f.child.pid!) }, idleRssKiB: 0, threshold: 0.95,
  };
  try {
    const placed = await placeMedia(ctx, o.calls, 25);
    await driver.settle(placed, 60_000);
    const ok = placed.filter((c) => !c.failure && c.id).map((c) => c.id!);
    const missing = await agentsUp(ctx, ok, 20_000);
    console.log(`${label}: ${ok.length} of ${o.calls} calls up, ${missing} agents missing`);
    await sleep(2000);
    // The engine's CPU is what `watched.gateway` meters; the API figures are the process answering.
    const result = await apiRun(ctx, `${label}, ${ok.length} calls with agents`, '/v1/calls?limit=50', {
      key: api.apiKey, rate: o.rate, seconds: o.seconds, ringing: 0, withAudio: new Set(ok), ...(o.apiPriority !== undefined ? { clientPriority: o.apiPriority } : {}),
    });
    return { result, engineCores: result.gatewayCores };
  } finally {
    await driver.hangupAll(120_000);
    driver.stopPolling();
    o.agent.forgetClosed();
  }
}

export async function rolesRun(o: RolesOptions): Promise<RolesReport> {
  const env: Record<string, string> = o.databaseUrl ? { VGW_DATABASE_URL: o.databaseUrl } : {};
  const carriers = carriersYaml(o.farEnds);
  const rtp = { min: 20000, max: 29999 };

  const singleDir = join(o.dir, 'single');
  mkdirSync(singleDir);
  const single = await startGatewayProcess({ root: o.root, dir: singleDir, httpPort: await freePort(), sipPort: await freePort(), carriersYaml: carriers, rtp, env, nodeArgs: o.nodeArgs });
  // On a shared database the split layout reuses this tenant: its number is held already.
  const sharedKey = o.databaseUrl ? single.apiKey : undefined;
  let singleResult: ApiUnderLoad;
  try {
    singleResult = (await measureWith(o, single, single, 'one all process')).result;
  } finally {
    await single.stop();
  }
  await sleep(3000);

  const splitDir = join(o.dir, 'split');
  mkdirSync(splitDir);
  const secret = randomBytes(24).toString('hex');
  const internal = [`internal:\n  port: ${await freePort()}`];
  const engine = await startGatewayProcess({
    root: o.root, dir: splitDir, httpPort: await freePort(), sipPort: await freePort(), carriersYaml: carriers, rtp, extraYaml: internal, nodeArgs: o.nodeArgs,
    env: { ...env, VGW_ROLE: 'engine', VGW_CLUSTER_SECRET: secret, VGW_NODE_ID: 'bench-engine' }, ...(sharedKey ? { apiKey: sharedKey } : {}),
  });
  try {
    const api = await startGatewayProcess({
      root: o.root, dir: splitDir, httpPort: await freePort(), sipPort: await freePort(), carriersYaml: carriers, rtp, extraYaml: internal, nodeArgs: o.nodeArgs,
      env: { ...env, VGW_ROLE: 'api', VGW_CLUSTER_SECRET: secret }, apiKey: engine.apiKey,
    });
    try {
      const { result, engineCores } = await measureWith(o, api, engine, 'api process, calls on an engine process');
      return { store: o.databaseUrl ? 'postgres' : 'sqlite', calls: o.calls, apiPriority: o.apiPriority ?? null, single: singleResult, split: result, engineCores };
    } finally {
      await api.stop();
    }
  } finally {
    await engine.stop();
  }
}
