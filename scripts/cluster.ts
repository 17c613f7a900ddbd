/**
 * @module `npm run cluster` (docs/CLUSTER.md "Try it: npm run cluster"): the whole cluster on one
 * machine, on loopback, in a temporary run folder: PostgreSQL, Redis, the Kamailio edge, engine A
 * on 127.0.0.2, engine B on 127.0.0.3 and one API process. Prints the API's address and the sandbox
 * key once everything answers; Ctrl-C (SIGINT) or SIGTERM stops every process it started, by pid,
 * in reverse order, and removes the run folder.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClusterStartError, portOn, tail, type Supervised } from './cluster-processes.js';
import { missingPackages, startEdge, startGatewayRole, startPostgres, startRedis, type SharedSettings } from './cluster-services.js';

const USAGE = `usage: npm run cluster
Starts PostgreSQL, Redis, the Kamailio edge, two engines and an API process on loopback, prints
the API's address and a sandbox key, and stops them all on Ctrl-C.
`;

/** The SIP ports of docs/CLUSTER.md's example; a free one instead where another program holds it. */
const EDGE_SIP_PORT = 5060;
const ENGINE_SIP_PORT = 5080;
/** RTP ports per engine: 500 call legs each, plenty on a laptop. */
const RTP_PORTS = 1000;

const out = (line: string): void => { process.stdout.write(`${line}\n`); };

/** Every process started so far, in start order; stopped in reverse. */
const owned: Supervised[] = [];
let runDir: string | undefined;
let stopping: Promise<void> | undefined;

/** Stops everything, last started first, and removes the run folder. Idempotent. */
function stopAll(): Promise<void> {
  stopping ??= (async () => {
    for (const p of [...owned].reverse()) {
      if (!p.running()) continue;
      out(`stopping ${p.name} (pid ${p.pid})`);
      await p.stop();
    }
    if (runDir !== undefined) {
      rmSync(runDir, { recursive: true, force: true });
      out(`removed ${runDir}`);
    }
    out('cluster stopped');
  })();
  return stopping;
}

/** An even RTP range in 40000-59999 per engine, random so that two runs on one machine rarely collide. */
function rtpRanges(count: number): { min: number; max: number }[] {
  const base = 40000 + 2 * Math.floor(Math.random() * ((20000 - count * RTP_PORTS) / 2));
  return Array.from({ length: count }, (_, i) => ({ min: base + i * RTP_PORTS, max: base + (i + 1) * RTP_PORTS - 1 }));
}

/** The sandbox key the API process announced on its first start (src/gateway/control-api-server.ts). */
function sandboxKey(api: Supervised): string {
  const key = /sandbox key: (vgw_test_[0-9A-Za-z]+)/.exec(api.log())?.[1];
  if (key === undefined) throw new ClusterStartError(`the API process printed no sandbox key:\n${tail(api.log())}`);
  return key;
}

async function start(dir: string): Promise<void> {
  const postgres = await startPostgres(owned, join(dir, 'postgres'), await portOn('127.0.0.1'));
  out(`  postgres  pid ${postgres.process.pid}  ${postgres.url}`);
  const redis = await startRedis(owned, join(dir, 'redis'), await portOn('127.0.0.1'));
  out(`  redis     pid ${redis.process.pid}  ${redis.url}`);

  const engines = [
    { name: 'engine-a', nodeId: 'node-a', sipHost: '127.0.0.2', sipPort: await portOn('127.0.0.2', ENGINE_SIP_PORT) },
    { name: 'engine-b', nodeId: 'node-b', sipHost: '127.0.0.3', sipPort: await portOn('127.0.0.3', ENGINE_SIP_PORT) },
  ];
  const edgePort = await portOn('127.0.0.1', EDGE_SIP_PORT);
  const edge = await startEdge(owned, join(dir, 'edge'), edgePort, await portOn('127.0.0.1'), engines);
  out(`  edge      pid ${edge.process.pid}  sip:127.0.0.1:${edgePort} (UDP and TCP), JSON-RPC ${edge.rpcUrl}`);

  const recordingsDir = join(dir, 'recordings');
  mkdirSync(recordingsDir);
  const shared: SharedSettings = {
    databaseUrl: postgres.url, redisUrl: redis.url, recordingsDir,
    clusterSecret: randomBytes(24).toString('hex'), secretKey: randomBytes(32).toString('hex'),
  };
  const ranges = rtpRanges(engines.length);
  // One after the other: the first engine creates the tables on the empty database.
  for (const [i, e] of engines.entries()) {
    const httpPort = await portOn('127.0.0.1');
    const internalPort = await portOn('127.0.0.1');
    const { min, max } = ranges[i]!;
    const engine = await startGatewayRole(owned, join(dir, e.name), shared, {
      name: e.name, role: 'engine', httpPort,
      engine: { ...e, internalPort, rtpMin: min, rtpMax: max, edgeSip: `sip:127.0.0.1:${edgePort}`, edgeRpcUrl: edge.rpcUrl },
    });
    out(`  ${e.name}  pid ${engine.pid}  node ${e.nodeId}, sip:${e.sipHost}:${e.sipPort}, http://127.0.0.1:${httpPort}, internal http://127.0.0.1:${internalPort}, RTP ${min}-${max}`);
  }
  const apiPort = await portOn('127.0.0.1');
  const api = await startGatewayRole(owned, join(dir, 'api'), shared, { name: 'api', role: 'api', httpPort: apiPort });
  out(`  api       pid ${api.pid}  http://127.0.0.1:${apiPort}`);

  out('');
  out(`API:         http://127.0.0.1:${apiPort}  (console: http://127.0.0.1:${apiPort}/console)`);
  out(`sandbox key: ${sandboxKey(api)}`);
  out(`SIP edge:    sip:127.0.0.1:${edgePort}`);
  out(`status:      VGW_DATABASE_URL=${postgres.url} VGW_REDIS_URL=${redis.url} npx tsx src/cli/vgw.ts cluster status`);
  out(`logs:        ${dir}/<part>/*.log`);
  out('Ctrl-C stops everything and removes the run folder.');
}

async function main(args: readonly string[]): Promise<number> {
  if (args.length > 0) {
    process.stdout.write(USAGE);
    return args.includes('--help') || args.includes('-h') ? 0 : 2;
  }
  const missing = missingPackages();
  if (missing.length > 0) {
    process.stderr.write(`npm run cluster needs ${missing.join(', ')}, which ${missing.length > 1 ? 'are' : 'is'} not installed: apt-get install ${missing.join(' ')}\n`);
    return 1;
  }
  const stopped = new Promise<void>((resolve) => {
    const onSignal = (): void => { void stopAll().then(resolve); };
    // `on`, not `once`: a Ctrl-C reaches this process more than once (from the terminal, and
    // relayed by npm and tsx), and a second one must not end it before it has stopped the rest.
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
  runDir = mkdtempSync(join(tmpdir(), 'vgw-cluster-'));
  // PostgreSQL runs as another user when we are root: it must reach its folder inside.
  chmodSync(runDir, 0o755);
  out(`vgw cluster: run folder ${runDir}`);
  try {
    await start(runDir);
  } catch (err) {
    if (stopping) {
      await stopped;
      return 0;
    }
    process.stderr.write(`vgw cluster: ${err instanceof ClusterStartError ? err.message : (err as Error).stack}\n`);
    await stopAll();
    return 1;
  }
  // A part that dies on its own takes the cluster down with it, rather than leaving half of it.
  const watch = setInterval(() => {
    const dead = owned.find((p) => !p.running());
    if (dead === undefined || stopping) return;
    process.stderr.write(`vgw cluster: ${dead.name} (pid ${dead.pid}) exited:\n${tail(dead.log())}\n`);
    process.exitCode = 1;
    process.kill(process.pid, 'SIGTERM');
  }, 2000);
  await stopped;
  clearInterval(watch);
  return Number(process.exitCode ?? 0);
}

const code = await main(process.argv.slice(2));
process.exitCode = code;
