/**
 * @module SipTrunkSide, the agent's SIP leg of a sip_trunk call (a B2BUA, RFC 7092), over real
 * SIP and RTP on loopback on the fake clock: the edge is dialled before the caller is answered,
 * its 18x and answer reach the caller, its failures become the caller's final response, CANCEL
 * and BYE cross from one leg to the other, and media is bridged through the gateway.
 */
import t from 'tap';
import type { SipTrunkTarget } from '../ports.js';
import { callRig, dialGateway, finalRecord, onlyCall, Phone, recordOf, RING_TIMEOUT_MS, TENANT, until, type RigOptions } from '../../../../test/support/call-engine-rig.js';

async function trunkRig(t: Parameters<typeof callRig>[0], o: RigOptions & { target?: (edge: Phone) => SipTrunkTarget | { error: string } } = {}) {
  const edge = await Phone.open(t);
  const resolved: { agentId: string; from: string }[] = [];
  const rig = await callRig(t, {
    route: { tenantId: TENANT, agentId: 'agt_trunk', connectionMode: 'sip_trunk' },
    resolveSipTrunk: (request) => {
      resolved.push({ agentId: request.agentId, from: request.call.from });
      return Promise.resolve(o.target ? o.target(edge) : { uri: `sip:agent@127.0.0.1:${edge.transport.udpPort}` });
    },
    ...o,
  });
  return { rig, edge, resolved };
}

t.test('RFC 7092 / docs/DECISIONS.md "Calls": the edge is dialled first; its 180 and its answer reach the caller; media is bridged', async (t) => {
  const { rig, edge, resolved } = await trunkRig(t);
  const dial = dialGateway(rig);
  const invite = await edge.invite();
  t.same(resolved, [{ agentId: 'agt_trunk', from: '+15550123' }], 'the route\'s agent is resolved for this call');
  t.match(invite.request.headers.get('From') ?? '', /sip:\+15550123@/, 'the edge sees the caller');
  t.equal(dial.final, null, 'the caller is not answered before the agent');
  invite.progress(180);
  await until(() => dial.provisional.includes(180), 'the 180 at the caller');
  t.equal(recordOf(rig, await onlyCall(rig)).state, 'ringing');
  const agentLeg = invite.accept(edge.sdp())!;
  await until(() => dial.final !== null, 'the caller\'s answer');
  t.equal(dial.final, 200);
  const id = await onlyCall(rig);
  t.equal(recordOf(rig, id).state, 'active');
  // The caller's audio reaches the edge through the gateway's own ports (media anchored here).
  const port = (rig.service.sessionOf(TENANT, id) as { remote: { local_rtp_port: number } }).remote.local_rtp_port;
  for (let seq = 1; seq <= 3; seq++) {
    await rig.phone.rtp.sendRtp(port, { payloadType: 0, sequenceNumber: seq, timestamp: seq * 160, ssrc: 9, marker: false }, new Uint8Array(160).fill(0x33));
    rig.clock.advance(20);
  }
  await until(() => edge.rtp.received.length > 0, 'relayed audio at the edge');
  t.pass('the caller\'s RTP is relayed to the edge');
  t.equal(agentLeg.isEnded, false);
});

t.test('RFC 3261 16.7 style: an edge answering busy makes the caller\'s final response 486; the call ends busy by the agent', async (t) => {
  const { rig, edge } = await trunkRig(t);
  const dial = dialGateway(rig);
  (await edge.invite()).reject(486);
  await until(() => dial.final !== null, 'the caller\'s final response');
  t.equal(dial.final, 486);
  t.match(await finalRecord(rig, await onlyCall(rig)), { end_reason: 'busy', sip_status: 486, hangup_by: 'agent' });
  await until(() => rig.ports.inUse === 0, 'both RTP ports freed');
});

t.test('RFC 3261 21.5.4: an agent whose target cannot be resolved gets the caller a 503; agent_unreachable', async (t) => {
  const { rig, edge } = await trunkRig(t, { target: () => ({ error: 'the platform refused the registration' }) });
  const dial = dialGateway(rig);
  await until(() => dial.final !== null, 'the caller\'s final response');
  t.equal(dial.final, 503);
  t.match(await finalRecord(rig, await onlyCall(rig)), { end_reason: 'agent_unreachable', hangup_by: 'gateway' });
  t.equal(edge.invites.length, 0, 'nothing was sent to the edge');
});

t.test('docs/SECURITY.md "Outbound addresses": an edge on a refused address is never dialled; the caller gets 503', async (t) => {
  const { rig, edge } = await trunkRig(t, { allowLoopbackTargets: false });
  const dial = dialGateway(rig);
  await until(() => dial.final !== null, 'the caller\'s final response');
  t.equal(dial.final, 503);
  t.match(await finalRecord(rig, await onlyCall(rig)), { end_reason: 'agent_unreachable' });
  t.equal(edge.invites.length, 0, 'no INVITE reached the refused address');
});

t.test('RFC 3261 9.1 / 9.2: the caller\'s CANCEL while the edge rings cancels the edge\'s INVITE; canceled by the caller', async (t) => {
  const { rig, edge } = await trunkRig(t);
  const dial = dialGateway(rig);
  const invite = await edge.invite();
  let edgeCancelled = false;
  invite.events.on('cancel', () => { edgeCancelled = true; });
  invite.progress(180);
  await until(() => dial.provisional.includes(180), 'the 180 at the caller');
  dial.call.cancel();
  await until(() => dial.final !== null, 'the caller\'s final response');
  t.equal(dial.final, 487);
  await until(() => edgeCancelled, 'the CANCEL at the edge');
  t.match(await finalRecord(rig, await onlyCall(rig)), { end_reason: 'canceled', sip_status: 487, hangup_by: 'caller' });
  await until(() => rig.ports.inUse === 0, 'both RTP ports freed');
});

t.test('RFC 7092 / docs/DECISIONS.md "End reasons": the edge\'s BYE ends the call completed by the agent, with BYE to the caller', async (t) => {
  const { rig, edge } = await trunkRig(t);
  const dial = dialGateway(rig);
  const agentLeg = (await edge.invite()).accept(edge.sdp())!;
  await until(() => dial.session !== null, 'the caller\'s answer');
  let callerBye = false;
  dial.session!.events.on('bye', () => { callerBye = true; });
  t.equal(await agentLeg.bye(), 200);
  t.match(await finalRecord(rig, await onlyCall(rig)), { end_reason: 'completed', hangup_by: 'agent' });
  await until(() => callerBye, 'the BYE at the caller');
});

t.test('RFC 3261 15.1.1: the caller\'s BYE is passed on to the edge', async (t) => {
  const { rig, edge } = await trunkRig(t);
  const dial = dialGateway(rig);
  const agentLeg = (await edge.invite()).accept(edge.sdp())!;
  await until(() => dial.session !== null, 'the caller\'s answer');
  let edgeBye = false;
  agentLeg.events.on('bye', () => { edgeBye = true; });
  t.equal(await dial.session!.bye(), 200);
  await until(() => edgeBye, 'the BYE at the edge');
  t.match(await finalRecord(rig, await onlyCall(rig)), { end_reason: 'completed', hangup_by: 'caller' });
  await until(() => rig.ports.inUse === 0, 'both RTP ports freed');
});

t.test('docs/CONFIGURATION.md calls.ring_timeout_seconds: an edge that rings too long is cancelled; the caller gets 480 and the call ends no_answer by the gateway', async (t) => {
  const { rig, edge } = await trunkRig(t, { timings: { mediaTimeoutMs: 0 } });
  const dial = dialGateway(rig);
  const invite = await edge.invite();
  let edgeCancelled = false;
  invite.events.on('cancel', () => { edgeCancelled = true; });
  invite.progress(180);
  await until(() => dial.provisional.includes(180), 'the 180 at the caller');
  rig.clock.advance(RING_TIMEOUT_MS);
  await until(() => dial.final !== null, 'the caller\'s final response');
  t.ok(edgeCancelled, 'the edge got CANCEL');
  t.equal(dial.final, 480);
  t.match(await finalRecord(rig, await onlyCall(rig)), { end_reason: 'no_answer', sip_status: 487, hangup_by: 'gateway' });
});
