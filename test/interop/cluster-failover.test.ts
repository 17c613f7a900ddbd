/**
 * docs/CLUSTER.md "When an engine dies": redis-server, the Kamailio edge (127.0.0.61), two engine
 * processes (127.0.0.62, 127.0.0.63) and an api process over one SQLite data folder, sipp as the
 * carrier (127.0.0.64) calling through the edge an imported agent. Engine A is killed with SIGKILL
 * mid-call: the surviving engine's reaper sends a BYE, through the edge, on every carrier leg A
 * owned, and writes their CDRs `gateway_failure`; B's calls go on untouched, a new call lands on
 * B, and the tenant's limit has room again once A's calls leave the live state.
 */
import t, { type Test } from 'tap';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createClient } from 'redis';
import { startFailoverCluster, type FailoverCluster } from '../support/failover-cluster.js';
import { waitFor } from '../support/gateway-harness.js';
import { answeredBy, byesByCallId, callIdOf, clusterApi, clusterCarrier } from '../support/cluster-carrier.js';
import { responsesIn, sippMessages, type SippPeer } from '../support/inbound-sipp-rig.js';
import { needPeer } from '../support/peers.js';
import { startRedis } from '../support/redis.js';

t.setTimeout(300_000);

const EDGE_IP = '127.0.0.61';
const ENGINE_IPS = ['127.0.0.62', '127.0.0.63'] as const;
const CARRIER_IP = '127.0.0.64';
const DID = '+15550161';
/** Four held calls fill the tenant's limit: two per engine. */
const HELD = 4;
/** docs/CLUSTER.md "When an engine dies": lease 10 s, reaper every 2 s; the bound the docs give. */
const REAPED_WITHIN_MS = 15_000;

const api = <T = CallView>(c: FailoverCluster, method: string, path: string): Promise<{ status: number; body: T }> => clusterApi<T>(c, method, path);
const carrier = (t: Test, c: FailoverCluster, scenario: string, args: string[]): Promise<SippPeer> => clusterCarrier(t, c, { ip: CARRIER_IP, did: DID }, scenario, args);

interface CallView { id: string; state: string; answered_at?: string | null; cdr?: { end_reason?: string; hangup_by?: string; ended_at?: string } | null }

/** The call ids the agent was started for (`start.customParameters.call_id`, docs/API.md "Agent WebSocket protocol"). */
function agentStarts(c: FailoverCluster): string[] {
  return c.bot.core.jsonMessages().flatMap((m) => {
    const id = (m.start as { customParameters?: { call_id?: unknown } } | undefined)?.customParameters?.call_id;
    return m.event === 'start' && typeof id === 'string' ? [id] : [];
  });
}


t.test('docs/CLUSTER.md "When an engine dies": engine A killed mid-call, its calls are ended by B through the edge', async (t) => {
  if (!needPeer(t, 'sipp', 'kamailio')) return;
  const redis = await startRedis(t);
  if (!redis) return;
  const c = await startFailoverCluster(t, redis, { edgeIp: EDGE_IP, engineIps: ENGINE_IPS, carrierIp: CARRIER_IP, did: DID, tenantLimit: HELD });
  const [engineA, engineB] = c.engines as [typeof c.engines[0], typeof c.engines[0]];
  const db = new Database(join(c.dataDir, 'gateway.db'), { readonly: true });
  t.teardown(() => db.close());
  const ownerOf = (id: string): unknown => db.prepare('SELECT node_id FROM calls WHERE id = ?').pluck().get(id);
  const liveIds = async (): Promise<string[]> => (await api<{ data: CallView[] }>(c, 'GET', '/v1/calls')).body.data.map((x) => x.id);

  const held = await carrier(t, c, 'cluster-uac-wait-bye.xml', ['-m', String(HELD), '-l', String(HELD)]);
  let ids: string[] = [];
  let owners = new Map<string, string>();

  await t.test('docs/CLUSTER.md "The SIP edge" and "Live state in Redis": inbound calls spread over both engines; the api process lists them all', async (t) => {
    ids = await waitFor(`${HELD} live calls through the api process`, async () => {
      const r = await api<{ data: CallView[] }>(c, 'GET', '/v1/calls');
      return r.body.data.length === HELD && r.body.data.every((x) => x.state === 'active') ? r.body.data.map((x) => x.id) : undefined;
    }, 30_000);
    const perEngine = c.engines.map((e) => ids.filter((id) => ownerOf(id) === e.nodeId).length);
    t.same(perEngine, [HELD / 2, HELD / 2], 'the edge gave each engine half of the calls');
    const started = await waitFor('the agent\'s start of every call', () => {
      const named = agentStarts(c).filter((id) => ids.includes(id));
      return named.length === HELD ? named : undefined;
    }, 20_000);
    t.same([...started].sort(), [...ids].sort(), 'each call reached the imported agent (its start names the call)');
    owners = answeredBy(sippMessages(held), ENGINE_IPS);
    t.equal(owners.size, HELD, 'the carrier saw each call answered with the owning engine\'s Contact');
    const over = await carrier(t, c, 'cluster-uac-503.xml', ['-m', '1']);
    t.equal((await over.run.done).code, 0, 'with the tenant\'s limit full across the engines, one more call gets 503');
    t.notMatch(responsesIn(sippMessages(over), 503)[0] ?? '', /No engine available/, 'an engine\'s call-level 503, not the edge\'s');
  });

  await t.test('docs/CLUSTER.md "When an engine dies": kill -9 of engine A; within 15 s each of its carrier legs gets a BYE through the edge, its CDRs read gateway_failure', async (t) => {
    const aCalls = ids.filter((id) => ownerOf(id) === engineA.nodeId);
    const bCalls = ids.filter((id) => ownerOf(id) === engineB.nodeId);
    const aDialogs = [...owners].filter(([, ip]) => ip === engineA.ip).map(([callId]) => callId);
    const bDialogs = [...owners].filter(([, ip]) => ip === engineB.ip).map(([callId]) => callId);
    t.equal(aDialogs.length, aCalls.length, 'the carrier\'s view of who answered agrees with the store\'s owner');
    const exited = new Promise((resolve) => engineA.process.child.once('exit', resolve));
    engineA.process.child.kill('SIGKILL');
    const killedAt = Date.now();
    await exited;

    const byes = await waitFor('a BYE on every carrier leg of engine A', () => {
      const seen = byesByCallId(sippMessages(held));
      return aDialogs.every((id) => seen.has(id)) ? seen : undefined;
    }, killedAt + REAPED_WITHIN_MS - Date.now());
    t.pass(`the carrier got a BYE on each of A's ${aDialogs.length} legs within ${REAPED_WITHIN_MS / 1000} s of the kill`);
    for (const id of aDialogs) {
      const bye = byes.get(id)![0]!;
      t.match(bye, new RegExp(`^Via: SIP/2\\.0/UDP ${EDGE_IP.replaceAll('.', '\\.')}:${c.edge.port};`, 'm'), 'the BYE came through the edge (its Via on top)');
      t.match(bye, new RegExp(`^Via: SIP/2\\.0/UDP ${engineB.ip.replaceAll('.', '\\.')}:`, 'm'), 'sent by engine B, the survivor');
      t.match(bye, /^Reason: Q\.850;cause=41;text="Temporary failure"$/m, 'with the reaper\'s Reason (RFC 3326)');
    }
    t.same(bDialogs.filter((id) => byes.has(id)), [], 'no BYE on engine B\'s legs');
    const answered = responsesIn(sippMessages(held), 200, 'BYE').map(callIdOf);
    t.ok(aDialogs.every((id) => answered.includes(id)), 'the carrier answered each of those BYEs 200');

    for (const id of aCalls) {
      const d = await waitFor(`call ${id} ended`, async () => {
        const r = await api(c, 'GET', `/v1/calls/${id}`);
        return r.body.state === 'ended' && r.body.cdr ? r.body : undefined;
      }, REAPED_WITHIN_MS);
      t.match(d.cdr, { end_reason: 'gateway_failure', hangup_by: 'gateway' }, 'docs/API.md "End reasons": gateway_failure, by the gateway');
      const endedAt = Date.parse(d.cdr!.ended_at!);
      t.ok(endedAt <= killedAt + 2000, `ended_at ${d.cdr!.ended_at} is the dead engine's last lease renewal (killed at ${new Date(killedAt).toISOString()}), not the time it was reaped`);
      t.ok(endedAt >= Date.parse(d.answered_at!), 'and never before the answer');
    }

    const live = await liveIds();
    t.same([...live].sort(), [...bCalls].sort(), 'the api process lists only B\'s calls');
    for (const id of bCalls) t.equal((await api(c, 'GET', `/v1/calls/${id}`)).body.state, 'active', `B's call ${id} is still active`);
    t.ok(engineB.process.child.exitCode === null, 'engine B is still running');
    t.match(engineB.process.output(), new RegExp(`"node_id":"${engineA.nodeId}".*"msg":"ending the calls of a dead engine"|"msg":"ending the calls of a dead engine".*"node_id":"${engineA.nodeId}"`), 'B\'s reaper logged the dead engine');
  });

  await t.test('docs/CLUSTER.md "Live state in Redis": A\'s calls left the tenant\'s live set; the limit has their room again and new calls land on B', async (t) => {
    const client = createClient({ url: redis.url });
    await client.connect();
    t.teardown(() => client.destroy());
    t.equal(await client.zCard(`vgw:live:${c.tenantId}`), HELD / 2, 'the tenant\'s live set holds B\'s calls only');
    await waitFor('engine A forgotten', async () => (await client.zScore('vgw:nodes', engineA.nodeId)) === null, REAPED_WITHIN_MS);
    t.equal(await client.exists(`vgw:node-calls:${engineA.nodeId}`), 0, 'A owns no call any more');
    t.equal(await client.exists(`vgw:node:${engineA.nodeId}`), 0, 'and has no lease');

    // Two at once: with B's two calls that is the limit, so both fit only if A's two were released.
    const before = new Set(await liveIds());
    const fresh = await carrier(t, c, 'cluster-uac-rr.xml', ['-m', '2', '-l', '2', '-d', '3000']);
    const newIds = await waitFor('two new live calls', async () => {
      const added = (await liveIds()).filter((id) => !before.has(id));
      return added.length === 2 ? added : undefined;
    }, 20_000);
    const done = await fresh.run.done;
    t.equal(done.code, 0, `both new calls were answered and completed: ${done.stderr.slice(0, 300)}`);
    t.same(newIds.map(ownerOf), [engineB.nodeId, engineB.nodeId], 'on engine B, the one left');
  });

  await t.test('docs/CLUSTER.md "Topology": B\'s calls were untouched: a hang-up through the api process ends them with a BYE of their own', async (t) => {
    // B's held calls, not the live list: the two short calls of the subtest before may still be
    // listed for a moment after they end, until their live entries are released.
    const bCalls = ids.filter((id) => ownerOf(id) === engineB.nodeId);
    for (const id of bCalls) t.equal((await api(c, 'POST', `/v1/calls/${id}/hangup`)).status, 200, `the hang-up of ${id} reaches engine B`);
    const done = await held.run.done;
    t.equal(done.code, 0, `every held call got its BYE and answered it: ${done.stderr.slice(0, 300)}`);
    const byes = byesByCallId(sippMessages(held));
    t.equal(byes.size, HELD, 'one BYE dialog per held call, each answered by the carrier');
    for (const id of bCalls) {
      const d = await waitFor(`call ${id} ended`, async () => {
        const r = await api(c, 'GET', `/v1/calls/${id}`);
        return r.body.cdr ? r.body : undefined;
      }, 10_000);
      t.match(d.cdr, { end_reason: 'completed', hangup_by: 'api' }, 'B\'s calls were not reaped: they ended by the hang-up');
    }
  });
});
