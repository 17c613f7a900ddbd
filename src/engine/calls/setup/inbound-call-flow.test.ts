/**
 * @module InboundCallFlow in media_bridge mode over real SIP and RTP on loopback, on the fake
 * clock: the caller's offer answered from our RTP port and joined to the route's imported agent;
 * an offer without a common codec refused with 488; BYE either way after the answer.
 */
import t from 'tap';
import { callRig, dialGateway, finalRecord, MEDIA_TIMEOUT_MS, onlyCall, recordOf, TENANT, until } from '../../../../test/support/call-engine-rig.js';

t.test('RFC 3264 6 / docs/DECISIONS.md "Calls": a routed INVITE is answered from our RTP port and joined to the route\'s agent', async (t) => {
  const rig = await callRig(t);
  const dial = dialGateway(rig);
  await until(() => dial.final !== null, 'the final response');
  t.equal(dial.final, 200);
  const id = await onlyCall(rig);
  const session = rig.service.sessionOf(TENANT, id) as { remote: { local_rtp_port: number } };
  t.match(dial.answer, new RegExp(`m=audio ${session.remote.local_rtp_port} RTP/AVP 0 `), 'the answer keeps the caller\'s first codec (PCMU), at our port');
  t.match(recordOf(rig, id), { direction: 'inbound', state: 'active', from_number: '+15550123', to_number: '+15550100', agent_type: 'imported', agent_id: 'agt_unit' });
  await until(() => rig.agents.links[0]?.started === true, 'the agent to connect');
  t.same(rig.agents.links[0]!.request.agent, { kind: 'imported', agentId: 'agt_unit' });
  t.match(rig.agents.links[0]!.request.call, { callId: id, direction: 'inbound', from: '+15550123', to: '+15550100' });
});

t.test('RFC 3264 6: an offer with no codec in common is refused with 488 and the call ends failed', async (t) => {
  const rig = await callRig(t);
  const dial = dialGateway(rig, { sdp: rig.phone.sdp({ codecs: [[9, 'G722']] }) });
  await until(() => dial.final !== null, 'the final response');
  t.equal(dial.final, 488);
  const id = await onlyCall(rig);
  t.match(await finalRecord(rig, id), { end_reason: 'failed', sip_status: 488, hangup_by: 'gateway', answered_at: null });
  t.equal(rig.agents.links.length, 0, 'no agent was opened');
  await until(() => rig.ports.inUse === 0, 'the RTP port freed');
});

t.test('RFC 3261 15.1.1: an API hang-up of an inbound call sends BYE to the caller; completed by the api', async (t) => {
  const rig = await callRig(t);
  const dial = dialGateway(rig);
  await until(() => dial.session !== null, 'the answer');
  let bye = false;
  dial.session!.events.on('bye', () => { bye = true; });
  const id = await onlyCall(rig);
  await rig.service.hangup(TENANT, id);
  t.ok(bye, 'the caller got BYE');
  t.match(await finalRecord(rig, id), { end_reason: 'completed', hangup_by: 'api' });
});

t.test('RFC 3261 15.1.2: the caller\'s BYE ends the inbound call completed by the caller', async (t) => {
  const rig = await callRig(t);
  const dial = dialGateway(rig);
  await until(() => dial.session !== null, 'the answer');
  const id = await onlyCall(rig);
  await until(() => rig.agents.links[0]?.started === true, 'the agent to connect');
  t.equal(await dial.session!.bye(), 200);
  t.match(await finalRecord(rig, id), { end_reason: 'completed', hangup_by: 'caller' });
  t.equal(rig.agents.links[0]!.closedWith, 'call ended');
});

t.test('docs/CONFIGURATION.md calls.media_timeout_seconds: an inbound call whose caller goes silent ends media_timeout with BYE', async (t) => {
  const rig = await callRig(t);
  const dial = dialGateway(rig);
  await until(() => dial.session !== null, 'the answer');
  let bye = false;
  dial.session!.events.on('bye', () => { bye = true; });
  const id = await onlyCall(rig);
  await until(() => rig.agents.links[0]?.started === true, 'the agent to connect');
  rig.clock.advance(MEDIA_TIMEOUT_MS);
  t.match(await finalRecord(rig, id), { end_reason: 'media_timeout', hangup_by: 'gateway' });
  await until(() => bye, 'the BYE at the caller');
});
