import t, { type Test } from 'tap';
import { randomUUID } from 'node:crypto';
import { silentLogger } from '../common/logger.js';
import { startRedis, type TestRedis } from '../../test/support/redis.js';
import { ClusterStateUnavailable, type LiveCallEntry } from './live-state.js';
import { RedisLiveState } from './redis-live-state.js';

type Open = (options?: { leaseTtlMs?: number; commandTimeoutMs?: number }) => Promise<RedisLiveState>;

/** A redis-server for the test and a way to open clients on it (each an engine or API process). */
async function rig(t: Test): Promise<{ redis: TestRedis; open: Open } | undefined> {
  const redis = await startRedis(t);
  if (!redis) return undefined;
  const open: Open = async (options = {}) => {
    const state = await RedisLiveState.open({ url: redis.url, logger: silentLogger(), ...options });
    t.teardown(() => state.close());
    return state;
  };
  return { redis, open };
}

let second = 0;
function entry(tenantId: string, nodeId: string, carrier = 'telnyx'): LiveCallEntry {
  const callId = `call_${randomUUID()}`;
  const createdAt = new Date(Date.UTC(2026, 10, 27, 8) + (second++) * 1000).toISOString();
  const list = JSON.stringify({ id: callId, created_at: createdAt, tenant_id: tenantId, state: 'active', direction: 'outbound', carrier });
  return { callId, tenantId, nodeId, callControlId: `v3:${randomUUID()}`, carrier, createdAt, list };
}

const limits = { tenantLimit: 3, carrierLimit: 100 };

t.test('docs/CLUSTER.md "Live state in Redis": the 4th call at a tenant limit of 3 is refused whichever engine admits it, and released calls free their places', async (t) => {
  const r = await rig(t);
  if (!r) return;
  const [engineA, engineB] = [await r.open(), await r.open()];
  const calls = [entry('t1', 'a'), entry('t1', 'b'), entry('t1', 'a'), entry('t1', 'b')];
  t.same(await engineA.admit(calls[0]!, limits), { ok: true });
  t.same(await engineB.admit(calls[1]!, limits), { ok: true });
  t.same(await engineA.admit(calls[2]!, limits), { ok: true });
  t.same(await engineB.admit(calls[3]!, limits), { ok: false, scope: 'tenant' }, 'the 4th, on the other engine, is over the limit');
  t.same(await engineA.admit(entry('t2', 'a'), limits), { ok: true }, "another tenant's calls are counted apart");
  t.same(await engineA.admit(calls[0]!, limits), { ok: true }, 'admitting a call already admitted changes nothing');

  await engineA.release(calls[0]!.callId);
  await engineA.release(calls[0]!.callId); // twice: still one place freed
  t.same(await engineB.admit(calls[3]!, limits), { ok: true }, 'a released call frees its place for either engine');
  t.same(await engineB.admit(entry('t1', 'b'), limits), { ok: false, scope: 'tenant' });
  t.end();
});

t.test('docs/CLUSTER.md "Live state in Redis": a carrier limit holds across engines and tenants', async (t) => {
  const r = await rig(t);
  if (!r) return;
  const [engineA, engineB] = [await r.open(), await r.open()];
  const carrierLimits = { tenantLimit: 100, carrierLimit: 2 };
  t.same(await engineA.admit(entry('t1', 'a', 'twilio'), carrierLimits), { ok: true });
  t.same(await engineB.admit(entry('t2', 'b', 'twilio'), carrierLimits), { ok: true });
  t.same(await engineB.admit(entry('t3', 'b', 'twilio'), carrierLimits), { ok: false, scope: 'carrier' });
  t.same(await engineB.admit(entry('t3', 'b', 'telnyx'), carrierLimits), { ok: true }, 'another carrier is counted apart');
  t.end();
});

t.test('docs/CLUSTER.md "Live state in Redis": owners are found by call id and control id within the tenant only; forgetting a node releases its calls', async (t) => {
  const r = await rig(t);
  if (!r) return;
  const [engineA, api] = [await r.open(), await r.open()];
  const onA = [entry('t1', 'a'), entry('t1', 'a'), entry('t1', 'a')];
  for (const e of onA) t.same(await engineA.admit(e, limits), { ok: true });
  const first = onA[0]!;
  t.equal(await api.ownerOf('t1', first.callId), 'a');
  t.equal(await api.ownerOf('t2', first.callId), undefined, "another tenant's call is not found");
  t.equal(await api.ownerOfControlId('t1', first.callControlId), 'a');
  t.equal(await api.ownerOfControlId('t2', first.callControlId), undefined);
  t.same((await api.callsOfNode('a')).sort(), onA.map((e) => e.callId).sort());

  await engineA.update(first.callId, JSON.stringify({ ...JSON.parse(first.list), state: 'ringing' }));
  t.same((await api.list('t1', { state: 'ringing' }, { limit: 10 })).items.map((i) => i.id), [first.callId], 'the updated list item is what the list filters on');
  await engineA.storeDialog(first.callId, 'carrier', JSON.stringify({ call_id: 'x@y', local_cseq: 2 }));
  await engineA.storeDialog(first.callId, 'agent', JSON.stringify({ call_id: 'z@y', local_cseq: 1 }));
  await engineA.storeDialog(first.callId, 'carrier', JSON.stringify({ call_id: 'x@y', local_cseq: 3, route_set: [] }));
  t.same(await api.dialogsOf(first.callId), {
    tenantId: first.tenantId,
    dialogs: { carrier: JSON.stringify({ call_id: 'x@y', local_cseq: 3, route_set: [] }), agent: JSON.stringify({ call_id: 'z@y', local_cseq: 1 }) },
  }, 'each leg\'s latest dialog snapshot is kept beside the others, byte for byte (an empty route set stays an array)');

  t.same((await api.forgetNode('a')).sort(), onA.map((e) => e.callId).sort(), 'every call of the node is released');
  t.equal(await api.ownerOf('t1', first.callId), undefined);
  t.equal(await api.ownerOfControlId('t1', first.callControlId), undefined);
  t.same(await api.callsOfNode('a'), []);
  t.same((await api.list('t1', {}, { limit: 10 })).items, []);
  t.same(await api.admit(entry('t1', 'b'), limits), { ok: true }, 'the places of the forgotten node are free');
  await api.update(first.callId, first.list);
  t.equal(await api.ownerOf('t1', first.callId), undefined, 'an update of a released call does not bring it back');
  t.end();
});

t.test('docs/CLUSTER.md "Live state in Redis": a lease not renewed expires and its node is dead until forgotten', async (t) => {
  const r = await rig(t);
  if (!r) return;
  const engine = await r.open({ leaseTtlMs: 300 });
  const api = await r.open();
  await engine.admit(entry('t1', 'a'), limits);
  await engine.renewLease({ nodeId: 'a', internalUrl: 'http://127.0.0.1:9001', capacity: 40, draining: false });
  await engine.renewLease({ nodeId: 'b', internalUrl: 'http://127.0.0.1:9002', capacity: 50, draining: true });
  const live = await api.leases();
  t.match(live.find((l) => l.nodeId === 'a'), { expired: false, internalUrl: 'http://127.0.0.1:9001', capacity: 40, liveCalls: 1, draining: false });
  t.match(live.find((l) => l.nodeId === 'b'), { expired: false, capacity: 50, liveCalls: 0, draining: true });
  t.same(await api.deadNodes(), []);

  // Only b keeps renewing; a's lease runs out.
  let dead = await api.deadNodes();
  while (dead.length === 0) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    await engine.renewLease({ nodeId: 'b', internalUrl: 'http://127.0.0.1:9002', capacity: 50, draining: true });
    dead = await api.deadNodes();
  }
  t.same(dead.map((d) => d.nodeId), ['a'], 'the node that stopped renewing is dead, the other is not');
  t.ok(dead[0]!.renewedAt > 0, 'with its last renewal');
  t.match((await api.leases()).find((l) => l.nodeId === 'a'), { expired: true });
  await api.forgetNode('a');
  t.same(await api.deadNodes(), []);
  t.same((await api.leases()).map((l) => l.nodeId), ['b']);
  t.end();
});

t.test('docs/CLUSTER.md "Live state in Redis": a lock is held by one process at a time, and only its holder releases it', async (t) => {
  const r = await rig(t);
  if (!r) return;
  const [a, b] = [await r.open(), await r.open()];
  const inner = await a.withLock('reaper', 5000, () => b.withLock('reaper', 5000, () => Promise.resolve('b ran')));
  t.same(inner, { acquired: true, value: { acquired: false } }, 'b cannot take the lock a holds');
  t.same(await b.withLock('reaper', 5000, () => Promise.resolve('b ran')), { acquired: true, value: 'b ran' }, 'a released it when done');
  // a's lock expires while a still runs; b takes it; a's release must not free b's.
  const outcome = await a.withLock('sweep', 100, async () => {
    while ((await b.withLock('sweep', 5000, () => Promise.resolve('never'))).acquired === false) await new Promise((resolve) => setTimeout(resolve, 50));
    return 'done';
  });
  t.same(outcome, { acquired: true, value: 'done' });
  const held = await b.withLock('sweep', 5000, () => a.withLock('sweep', 5000, () => Promise.resolve('a again')));
  t.same(held, { acquired: true, value: { acquired: false } }, 'a lock taken by b is exclusive again');
  await t.rejects(a.withLock('reaper', 5000, () => Promise.reject(new Error('work failed'))), /work failed/);
  t.end();
});

t.test('docs/CLUSTER.md "Live state in Redis": a Redis that stops answering or is gone gives ClusterStateUnavailable, not a hang', async (t) => {
  const r = await rig(t);
  if (!r) return;
  const state = await r.open({ commandTimeoutMs: 300 });
  t.same(await state.admit(entry('t1', 'a'), limits), { ok: true });
  // Stopped (SIGSTOP): the connection is up but nothing answers; the command time-out ends the wait.
  process.kill(r.redis.pid, 'SIGSTOP');
  try {
    await t.rejects(state.admit(entry('t1', 'a'), limits), ClusterStateUnavailable, 'a Redis that does not answer');
    await t.rejects(state.list('t1', {}, { limit: 5 }), ClusterStateUnavailable);
  } finally {
    process.kill(r.redis.pid, 'SIGCONT');
  }
  await r.redis.stop();
  await t.rejects(state.release('x'), ClusterStateUnavailable, 'a Redis that is gone');
  await t.rejects(state.ownerOf('t1', 'x'), ClusterStateUnavailable);
  await t.rejects(state.renewLease({ nodeId: 'a', internalUrl: 'http://x', capacity: 1, draining: false }), ClusterStateUnavailable);
  const late = await RedisLiveState.open({ url: r.redis.url, logger: silentLogger(), connectTimeoutMs: 200 });
  t.teardown(() => late.close());
  await t.rejects(late.leases(), ClusterStateUnavailable, 'a process started while Redis is away starts, and its operations fail typed');
  t.end();
});
