/**
 * docs/CLUSTER.md "When an engine dies": the topology of cluster-failover.test.ts (redis-server,
 * the Kamailio edge 127.0.0.71, engines A 127.0.0.72 and B 127.0.0.73, an api process, sipp as
 * the carrier 127.0.0.74 holding calls). Engine A is killed with SIGKILL and started again at once
 * under the same node id, before its 10 s lease expires, so no other engine reaps it: the
 * restarted A itself reads the dialogs its previous run left in Redis, sends each far end a BYE
 * through the edge, and recovery writes their CDRs `gateway_restart`. B's calls go on untouched.
 */
import t, { type Test } from 'tap';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createClient } from 'redis';
import { restartEngine, startFailoverCluster, type FailoverCluster } from '../support/failover-cluster.js';
import { waitFor } from '../support/gateway-harness.js';
import { answeredBy, byesByCallId, callIdOf, clusterApi, clusterCarrier } from '../support/cluster-carrier.js';
import { responsesIn, sippMessages, type SippPeer } from '../support/inbound-sipp-rig.js';
import { needPeer } from '../support/peers.js';
import { startRedis } from '../support/redis.js';

t.setTimeout(300_000);

const EDGE_IP = '127.0.0.71';
const ENGINE_IPS = ['127.0.0.72', '127.0.0.73'] as const;
const CARRIER_IP = '127.0.0.74';
const DID = '+15550171';
/** Four held calls, two per engine. */
const HELD = 4;
/** The bound docs/CLUSTER.md "When an engine dies" gives for the far ends' BYEs. */
const ENDED_WITHIN_MS = 15_000;

const api = <T = CallView>(c: FailoverCluster, method: string, path: string): Promise<{ status: number; body: T }> => clusterApi<T>(c, method, path);
const carrier = (t: Test, c: FailoverCluster, scenario: string, args: string[]): Promise<SippPeer> => clusterCarrier(t, c, { ip: CARRIER_IP, did: DID }, scenario, args);

interface CallView { id: string; state: string; cdr?: { end_reason?: string; hangup_by?: string } | null }

const viaOf = (ip: string): RegExp => new RegExp(`^Via: SIP/2\\.0/UDP ${ip.replaceAll('.', '\\.')}:`, 'm');

t.test('docs/CLUSTER.md "When an engine dies": engine A killed mid-call and restarted under its node id ends its own previous run\'s calls', async (t) => {
  if (!needPeer(t, 'sipp', 'kamailio')) return;
  const redis = await startRedis(t);
  if (!redis) return;
  const c = await startFailoverCluster(t, redis, { edgeIp: EDGE_IP, engineIps: ENGINE_IPS, carrierIp: CARRIER_IP, did: DID, tenantLimit: HELD });
  const [engineA, engineB] = c.engines as [typeof c.engines[0], typeof c.engines[0]];
  const db = new Database(join(c.dataDir, 'gateway.db'), { readonly: true });
  t.teardown(() => db.close());
  const ownerOf = (id: string): unknown => db.prepare('SELECT node_id FROM calls WHERE id = ?').pluck().get(id);
  const held = await carrier(t, c, 'cluster-uac-wait-bye.xml', ['-m', String(HELD), '-l', String(HELD)]);

  const ids = await waitFor(`${HELD} live calls through the api process`, async () => {
    const r = await api<{ data: CallView[] }>(c, 'GET', '/v1/calls');
    return r.body.data.length === HELD && r.body.data.every((x) => x.state === 'active') ? r.body.data.map((x) => x.id) : undefined;
  }, 30_000);
  const aCalls = ids.filter((id) => ownerOf(id) === engineA.nodeId);
  const bCalls = ids.filter((id) => ownerOf(id) === engineB.nodeId);
  t.same([aCalls.length, bCalls.length], [HELD / 2, HELD / 2], 'docs/CLUSTER.md "The SIP edge": the edge gave each engine half of the calls');
  const owners = answeredBy(sippMessages(held), ENGINE_IPS);
  const aDialogs = [...owners].filter(([, ip]) => ip === engineA.ip).map(([callId]) => callId);
  const bDialogs = [...owners].filter(([, ip]) => ip === engineB.ip).map(([callId]) => callId);
  t.same([aDialogs.length, bDialogs.length], [aCalls.length, bCalls.length], 'the carrier\'s view of who answered agrees with the store\'s owner');

  const exited = new Promise((resolve) => engineA.process.child.once('exit', resolve));
  engineA.process.child.kill('SIGKILL');
  const killedAt = Date.now();
  await exited;
  const restarted = await restartEngine(t, engineA);

  const byes = await waitFor('a BYE on every carrier leg of engine A', () => {
    const seen = byesByCallId(sippMessages(held));
    return aDialogs.every((id) => seen.has(id)) ? seen : undefined;
  }, Math.max(killedAt + ENDED_WITHIN_MS - Date.now(), 0));
  t.pass(`the carrier got a BYE on each of A's ${aDialogs.length} legs within ${ENDED_WITHIN_MS / 1000} s of the kill`);
  for (const id of aDialogs) {
    const bye = byes.get(id)![0]!;
    t.match(bye, new RegExp(`^Via: SIP/2\\.0/UDP ${EDGE_IP.replaceAll('.', '\\.')}:${c.edge.port};`, 'm'), 'the BYE came through the edge (its Via on top)');
    t.match(bye, viaOf(engineA.ip), 'sent from engine A\'s own address: the restarted engine');
    t.notMatch(bye, viaOf(engineB.ip), 'not from engine B');
    t.match(bye, /^Reason: Q\.850;cause=41;text="Temporary failure"$/m, 'with Reason Q.850 cause 41 (RFC 3326)');
  }
  t.same(bDialogs.filter((id) => byes.has(id)), [], 'no BYE on engine B\'s legs');
  const answered = await waitFor('the carrier\'s 200 to each BYE', () => {
    const oks = responsesIn(sippMessages(held), 200, 'BYE').map(callIdOf);
    return aDialogs.every((id) => oks.includes(id)) ? oks : undefined;
  }, 10_000);
  t.ok(aDialogs.every((id) => answered.includes(id)), 'the carrier answered each of those BYEs 200');
  // The BYEs go out in the background after the lease is renewed; the line follows their answers.
  const logged = await waitFor('the restarted engine\'s log of those BYEs', () => /"msg":"sent BYE on the dialogs this engine's previous run left up"/.test(restarted.output()) || undefined, 10_000);
  t.ok(logged, 'the restarted engine logged the BYEs of its previous run');

  for (const id of aCalls) {
    const d = await waitFor(`call ${id} ended`, async () => {
      const r = await api(c, 'GET', `/v1/calls/${id}`);
      return r.body.state === 'ended' && r.body.cdr ? r.body : undefined;
    }, ENDED_WITHIN_MS);
    t.match(d.cdr, { end_reason: 'gateway_restart' }, 'docs/API.md "End reasons": recovery ended it gateway_restart, not a reaper\'s gateway_failure');
  }
  for (const id of bCalls) t.equal((await api(c, 'GET', `/v1/calls/${id}`)).body.state, 'active', `B's call ${id} is still active`);
  t.notMatch(engineB.process.output(), /"msg":"ending the calls of a dead engine"/, 'B\'s reaper never took A for dead');

  const client = createClient({ url: redis.url });
  await client.connect();
  t.teardown(() => client.destroy());
  // Members are `created_at|call_id` (src/cluster/redis-live-state.ts).
  const liveSet = (await client.zRange(`vgw:live:${c.tenantId}`, 0, -1)).map((m) => m.slice(m.indexOf('|') + 1));
  t.same(liveSet.sort(), [...bCalls].sort(), 'docs/CLUSTER.md "Live state in Redis": the tenant\'s live set holds only B\'s calls');
  t.equal(await client.exists(`vgw:node-calls:${engineA.nodeId}`), 0, 'the restarted A owns none of its previous run\'s calls');

  // B's calls were untouched: a hang-up through the api process ends them with a BYE of their own.
  for (const id of bCalls) t.equal((await api(c, 'POST', `/v1/calls/${id}/hangup`)).status, 200, `the hang-up of ${id} reaches engine B`);
  const done = await held.run.done;
  t.equal(done.code, 0, `every held call got its BYE and answered it: ${done.stderr.slice(0, 300)}`);
  for (const id of bDialogs) t.ok(byesByCallId(sippMessages(held)).get(id)?.every((bye) => viaOf(engineB.ip).test(bye)), `B's leg ${id} got its BYE from B, after the hang-up`);
});
