/**
 * @module The engine carrying a call stores its carrier dialog's snapshot once the leg is confirmed
 * (docs/ARCHITECTURE.md "Process roles"), and a BYE built from that snapshot ends the call at the
 * far end (RFC 3261 §12.2.1.1, §15.1.1). Over real SIP on loopback.
 */
import t from 'tap';
import { callRig, dialGateway, onlyCall, Phone, placeCall, TENANT, until, type CallRig, type RigOptions } from '../../../test/support/call-engine-rig.js';
import { parseDialogSnapshot, type DialogSnapshot } from '../sip/index.js';
import type { SnapshotLeg } from './ports.js';

/** The rig with a DialogSnapshots port that keeps what it is given, as JSON (as the cluster stores it). */
async function rigWithSnapshots(t: Parameters<typeof callRig>[0], o: RigOptions = {}): Promise<{ rig: CallRig; stored: { callId: string; leg: SnapshotLeg; json: string }[] }> {
  const rig = await callRig(t, o);
  const stored: { callId: string; leg: SnapshotLeg; json: string }[] = [];
  rig.deps.calls.dialogSnapshots = { store: (callId, leg, snapshot) => stored.push({ callId, leg, json: JSON.stringify(snapshot) }) };
  return { rig, stored };
}

function read(json: string): DialogSnapshot {
  const s = parseDialogSnapshot(json);
  if (!s) throw new Error(`not a snapshot: ${json}`);
  return s;
}

t.test('docs/ARCHITECTURE.md "Process roles": an outbound call\'s carrier dialog is stored when the 2xx arrives, and a BYE from it reaches the callee', async (t) => {
  const { rig, stored } = await rigWithSnapshots(t);
  const id = await placeCall(rig);
  await until(() => rig.phone.invites.length === 1, 'the INVITE at the phone');
  const invite = rig.phone.invites[0]!;
  t.same(stored, [], 'nothing before the answer');
  const callee = invite.accept(rig.phone.sdp());
  if (!callee) throw new Error('the phone could not answer');
  await until(() => stored.length === 1, 'the snapshot');
  const { callId, leg, json } = stored[0]!;
  t.equal(callId, id, 'stored under the call id');
  t.equal(leg, 'carrier');
  const snapshot = read(json);
  t.match(snapshot, { callId: invite.request.callId, localTag: callee.dialog.remoteTag, remoteTag: callee.dialog.localTag, transport: 'UDP' }, 'the dialog id seen from our side');
  let bye = false;
  callee.events.on('bye', () => { bye = true; });
  const outcome = await rig.ua.byeFromSnapshot(snapshot);
  t.equal(outcome.status, 200, 'the callee accepts the BYE (its CSeq is in order)');
  t.ok(bye, 'and its session ends');
});

t.test('docs/ARCHITECTURE.md "Process roles": an inbound call\'s carrier dialog is stored when the gateway answers, and a BYE from it reaches the caller', async (t) => {
  const { rig, stored } = await rigWithSnapshots(t);
  const dial = dialGateway(rig);
  await until(() => dial.session !== null, 'the answer');
  const id = await onlyCall(rig);
  await until(() => stored.length === 1, 'the snapshot');
  t.match(stored[0], { callId: id, leg: 'carrier' });
  const caller = dial.session!;
  const snapshot = read(stored[0]!.json);
  t.match(snapshot, { callId: caller.dialog.callId, localTag: caller.dialog.remoteTag, remoteTag: caller.dialog.localTag });
  let bye = false;
  caller.events.on('bye', () => { bye = true; });
  t.equal((await rig.ua.byeFromSnapshot(snapshot)).status, 200);
  t.ok(bye, 'the caller\'s session ends');
});

t.test('docs/ARCHITECTURE.md "Process roles": a sip_trunk call stores both legs, the agent edge\'s and the caller\'s, and a BYE from each reaches its end', async (t) => {
  const edge = await Phone.open(t);
  const { rig, stored } = await rigWithSnapshots(t, {
    route: { tenantId: TENANT, agentId: 'agt_trunk', connectionMode: 'sip_trunk' },
    resolveSipTrunk: () => Promise.resolve({ uri: `sip:agent@127.0.0.1:${edge.transport.udpPort}` }),
  });
  const dial = dialGateway(rig);
  const invite = await edge.invite();
  const agentLeg = invite.accept(edge.sdp());
  if (!agentLeg) throw new Error('the edge could not answer');
  await until(() => dial.session !== null, 'the caller\'s answer');
  const id = await onlyCall(rig);
  await until(() => stored.length === 2, 'both snapshots');
  const byLeg = new Map(stored.map((s) => [s.leg, s]));
  t.same([...byLeg.keys()].sort(), ['agent', 'carrier']);
  t.ok(stored.every((s) => s.callId === id), 'both under the call id');
  const agent = read(byLeg.get('agent')!.json);
  t.match(agent, { callId: invite.request.callId, remoteTag: agentLeg.dialog.localTag });
  let edgeBye = false;
  agentLeg.events.on('bye', () => { edgeBye = true; });
  t.equal((await rig.ua.byeFromSnapshot(agent)).status, 200);
  t.ok(edgeBye, 'the agent edge\'s session ends');
  let callerBye = false;
  dial.session!.events.on('bye', () => { callerBye = true; });
  t.equal((await rig.ua.byeFromSnapshot(read(byLeg.get('carrier')!.json))).status, 200);
  t.ok(callerBye, 'the caller\'s session ends');
});
