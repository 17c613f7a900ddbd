/** @module The reaper against a real store and far ends on loopback UDP (docs/ARCHITECTURE.md "Process roles"). */
import t, { type Test } from 'tap';
import { createSocket, type Socket } from 'node:dgram';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { FakeClock } from '../common/clock.js';
import { createLogger } from '../common/logger.js';
import { SecretBox } from '../common/secret-box.js';
import { callDetailRecord } from '../engine/calls/call-record.js';
import type { DialogSnapshot } from '../engine/sip/index.js';
import { CdrJournal, DurableCallStore, openStore, type CallRecord } from '../storage/index.js';
import { callRecord } from '../../test/support/call-records.js';
import { MemoryReaperState } from '../../test/support/memory-reaper-state.js';
import { sample } from '../../test/support/metrics.js';
import { startGatewayUa } from '../../test/support/sip-sipp.js';
import { NodeReaper } from './node-reaper.js';

/** A far end on loopback UDP that answers every BYE 200 and keeps what it received. */
interface FarEnd {
  port: number;
  byes: { callId: string; cseq: number; toTag: string; reason: string }[];
}

async function farEnd(t: Test): Promise<FarEnd> {
  const socket: Socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  t.teardown(() => socket.close());
  const end: FarEnd = { port: socket.address().port, byes: [] };
  socket.on('message', (data, rinfo) => {
    const text = data.toString('utf8');
    if (!text.startsWith('BYE ')) return;
    const header = (name: string): string => new RegExp(`^${name}:\\s*(.*)$`, 'mi').exec(text)?.[1]?.trim() ?? '';
    end.byes.push({
      callId: header('Call-ID'), cseq: Number.parseInt(header('CSeq'), 10), toTag: /tag=([^;>\s]+)/.exec(header('To'))?.[1] ?? '', reason: header('Reason'),
    });
    const copied = ['Via', 'From', 'To', 'Call-ID', 'CSeq'].map((h) => `${h}: ${header(h)}`);
    socket.send(['SIP/2.0 200 OK', ...copied, 'Content-Length: 0', '', ''].join('\r\n'), rinfo.port, rinfo.address);
  });
  return end;
}

/** A confirmed dialog toward `port` on loopback, as its owner stored it. */
function snapshot(callId: string, remoteTag: string, port: number): string {
  const s: DialogSnapshot = {
    callId, localTag: `gw-${remoteTag}`, remoteTag, localUri: '<sip:gw@127.0.0.1>', remoteUri: '<sip:+15550199@127.0.0.1>',
    remoteTarget: `sip:far@127.0.0.1:${port}`, routeSet: [], localSeq: 7, transport: 'UDP',
  };
  return JSON.stringify(s);
}

/** The store, a survivor user agent, the live state and the clock at 12:00 (the dead node last renewed at 11:40). */
async function rig(t: Test) {
  const dir = t.testdir({});
  const clock = new FakeClock(Date.parse('2026-01-01T12:00:00.000Z'));
  const store = await openStore(join(dir, 'gateway.db'), clock, { idleMs: 60_000, absoluteMs: 3_600_000 }, new SecretBox(randomBytes(32)));
  t.teardown(() => store.db.close());
  const logger = createLogger({ level: 'silent' });
  const calls = new DurableCallStore({
    calls: store.calls, transcripts: store.transcripts, transaction: (fn) => store.transaction(fn), journal: new CdrJournal(join(dir, 'data')), clock, logger, retryMs: 1000,
  });
  const tenant = await store.tenants.create('acme');
  const { ua } = await startGatewayUa(t, { timers: { T1: 50, T2: 200, T4: 250 } });
  const state = new MemoryReaperState();
  state.addNode('node-dead', new Date('2026-01-01T11:40:00.000Z'), true);
  state.addNode('node-live', new Date('2026-01-01T11:59:59.000Z'), false);
  const reaper = (metrics?: Registry): NodeReaper => new NodeReaper({
    state, calls, bye: (s) => ua.byeFromSnapshot(s), selfNodeId: 'node-self', clock, logger, ...(metrics ? { metrics } : {}),
  });
  const insert = async (overrides: Partial<CallRecord>): Promise<CallRecord> => {
    const call = callRecord(tenant.id, '2026-01-01T10:59:58.000Z', { answered_at: '2026-01-01T11:00:00.000Z', ...overrides });
    await store.calls.insert(call);
    return call;
  };
  const cdr = async (id: string) => callDetailRecord((await store.calls.get(tenant.id, id))!);
  const record = async (id: string) => store.calls.get(tenant.id, id);
  return { tenant, state, calls, reaper, insert, cdr, record };
}

t.test('docs/ARCHITECTURE.md "Process roles": a dead engine\'s calls get a BYE on every stored dialog and a gateway_failure CDR at its last lease renewal', async (t) => {
  const { tenant, state, calls, reaper, insert, cdr, record } = await rig(t);
  const carrier = await farEnd(t);
  const agent = await farEnd(t);
  const bridged = await insert({});
  const streamed = await insert({ answered_at: '2026-01-01T11:50:00.000Z' }); // answered after the last renewal (a clock step)
  const already = await insert({ state: 'ended', ended_at: '2026-01-01T11:30:00.000Z', end_reason: 'completed', hangup_by: 'caller' });
  const ofLive = await insert({});
  state.addCall({ nodeId: 'node-dead', tenantId: tenant.id, callId: bridged.id, dialogs: { carrier: snapshot('sip-1', 'c1', carrier.port), agent: snapshot('sip-2', 'a1', agent.port) } });
  state.addCall({ nodeId: 'node-dead', tenantId: tenant.id, callId: streamed.id, dialogs: { carrier: snapshot('sip-3', 'c2', carrier.port) } });
  state.addCall({ nodeId: 'node-dead', tenantId: tenant.id, callId: already.id, dialogs: { carrier: snapshot('sip-4', 'c3', carrier.port) } });
  state.addCall({ nodeId: 'node-live', tenantId: tenant.id, callId: ofLive.id, dialogs: { carrier: snapshot('sip-5', 'c4', carrier.port) } });
  const metrics = new Registry();

  t.same(await reaper(metrics).reapOnce(), { nodes: 1, calls: 3 });
  await calls.settled();

  t.same(carrier.byes.map((b) => b.callId).sort(), ['sip-1', 'sip-3'], 'the carrier legs of the calls still up, once each; none for the ended call or the live node');
  t.same(agent.byes.map((b) => b.callId), ['sip-2'], 'the sip_trunk agent leg too');
  for (const bye of [...carrier.byes, ...agent.byes]) {
    t.ok(bye.cseq > 7, `${bye.callId}: CSeq ${bye.cseq} above the stored one`);
    t.match(bye.reason, /^Q\.850;cause=41/, `${bye.callId}: Reason Q.850 cause 41`);
  }
  t.match(await cdr(bridged.id), { end_reason: 'gateway_failure', hangup_by: 'gateway', ended_at: '2026-01-01T11:40:00.000Z', billable_s: 2400 }, 'ended at the last renewal');
  t.match(await cdr(streamed.id), { end_reason: 'gateway_failure', ended_at: '2026-01-01T11:50:00.000Z' }, 'never before its answer');
  t.match(await cdr(already.id), { end_reason: 'completed', ended_at: '2026-01-01T11:30:00.000Z' }, 'a call already ended keeps its record');
  t.same([...state.released].sort(), [bridged.id, streamed.id, already.id].sort(), 'each reaped call released once');
  t.equal(state.nodes.has('node-dead'), false, 'the dead node is forgotten');
  t.match(await record(ofLive.id), { state: 'active', end_reason: null, ended_at: null }, "the live node's call is untouched");
  t.ok(state.calls.has(ofLive.id), 'and still in the live state');
  const text = await metrics.metrics();
  t.equal(sample(text, 'vgw_cluster_reaped_calls_total{outcome="ended"}'), 2);
  t.equal(sample(text, 'vgw_cluster_reaped_calls_total{outcome="already_ended"}'), 1);

  t.same(await reaper().reapOnce(), { nodes: 0, calls: 0 }, 'a second pass finds nothing');
  t.equal(carrier.byes.length, 2, 'and sends nothing');
});

t.test('docs/ARCHITECTURE.md "Process roles": two engines reaping at once end each call once (the lock)', async (t) => {
  const { tenant, state, calls, reaper, insert, cdr } = await rig(t);
  const carrier = await farEnd(t);
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const call = await insert({});
    ids.push(call.id);
    state.addCall({ nodeId: 'node-dead', tenantId: tenant.id, callId: call.id, dialogs: { carrier: snapshot(`sip-${i}`, `c${i}`, carrier.port) } });
  }
  const passes = await Promise.all([reaper().reapOnce(), reaper().reapOnce()]);
  await calls.settled();
  t.same(passes.filter((p) => p === null).length, 1, 'one engine found the lock taken');
  t.same(state.locked, { ran: 1, refused: 1 });
  t.same(carrier.byes.map((b) => b.callId).sort(), ['sip-0', 'sip-1', 'sip-2', 'sip-3', 'sip-4'], 'one BYE per call');
  t.same([...state.released].sort(), [...ids].sort(), 'each call released once');
  for (const id of ids) t.match(await cdr(id), { end_reason: 'gateway_failure' });
});

t.test('docs/ARCHITECTURE.md "Process roles": a far end that does not answer, or a snapshot that is not one, does not keep the call up', async (t) => {
  const { tenant, state, calls, reaper, insert, cdr } = await rig(t);
  // A port nothing answers on: the BYE times out (Timer F) or the transport reports it unreachable.
  const silent = createSocket('udp4');
  await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
  t.teardown(() => silent.close());
  const call = await insert({});
  state.addCall({ nodeId: 'node-dead', tenantId: tenant.id, callId: call.id, dialogs: { carrier: snapshot('sip-s', 's1', silent.address().port), agent: '{"not":"a snapshot"}' } });
  t.same(await reaper().reapOnce(), { nodes: 1, calls: 1 });
  await calls.settled();
  t.match(await cdr(call.id), { end_reason: 'gateway_failure', ended_at: '2026-01-01T11:40:00.000Z' });
  t.same(state.released, [call.id]);
});

t.test('docs/ARCHITECTURE.md "Process roles": an engine never reaps its own calls, even when its own lease lapsed', async (t) => {
  const { tenant, state, reaper, insert, record } = await rig(t);
  const carrier = await farEnd(t);
  state.addNode('node-self', new Date('2026-01-01T11:00:00.000Z'), true);
  const call = await insert({});
  state.addCall({ nodeId: 'node-self', tenantId: tenant.id, callId: call.id, dialogs: { carrier: snapshot('sip-own', 'o1', carrier.port) } });
  t.same(await reaper().reapOnce(), { nodes: 1, calls: 0 }, 'only the other dead node (with no calls) is forgotten');
  t.same(carrier.byes, [], 'no BYE');
  t.match(await record(call.id), { state: 'active', end_reason: null }, 'its call is untouched');
  t.ok(state.nodes.has('node-self') && state.calls.has(call.id), 'and left in the live state');
});
