/**
 * @module OutboundCallFlow over real SIP on loopback, on the fake clock: 18x makes the call
 * `ringing`, 2xx `active` with its agent; a final failure ends it with its reason and status; the
 * ring time-out and a hang-up before the answer send CANCEL (RFC 3261 9.1).
 */
import t from 'tap';
import { callRig, finalRecord, placeCall, recordOf, RING_TIMEOUT_MS, TENANT, until } from '../../../../test/support/call-engine-rig.js';

t.test('docs/DECISIONS.md "The agent connects on answer": 180 makes the call ringing, 200 active with its agent connected', async (t) => {
  const rig = await callRig(t);
  const id = await placeCall(rig);
  const invite = await rig.phone.invite();
  t.match(invite.request.uri, /^sip:\+15550199@127\.0\.0\.1:/, 'the Request-URI carries the dialled number in the carrier format');
  t.match(invite.request.headers.get('From') ?? '', /sip:\+15550100@127\.0\.0\.1/);
  t.equal(recordOf(rig, id).state, 'initiated');
  invite.progress(180);
  await until(() => recordOf(rig, id).state === 'ringing', 'ringing');
  t.ok(recordOf(rig, id).ringing_at, 'ringing_at is set');
  invite.accept(rig.phone.sdp());
  await until(() => recordOf(rig, id).state === 'active', 'active');
  t.ok(recordOf(rig, id).answered_at, 'answered_at is set');
  await until(() => rig.agents.links[0]?.started === true, 'the agent connected');
  const link = rig.agents.links[0]!;
  t.same(link.request.agent, { kind: 'websocket', url: 'wss://agent.example/stream' });
  t.match(link.request.call, { callId: id, from: '+15550100', to: '+15550199', direction: 'outbound' });
  t.equal(link.request.tenantId, TENANT);
});

t.test('RFC 3261 9.1: no answer within the ring time-out sends CANCEL; the call ends no_answer, 487, by the gateway', async (t) => {
  const rig = await callRig(t);
  const id = await placeCall(rig);
  const invite = await rig.phone.invite();
  let cancelled = false;
  invite.events.on('cancel', () => { cancelled = true; });
  invite.progress(180);
  await until(() => recordOf(rig, id).state === 'ringing', 'ringing');
  rig.clock.advance(RING_TIMEOUT_MS - 1000);
  t.notOk(cancelled, 'no CANCEL before the ring time-out');
  rig.clock.advance(1000);
  await until(() => cancelled, 'the CANCEL at the phone');
  const final = await finalRecord(rig, id);
  t.match(final, { state: 'ended', end_reason: 'no_answer', sip_status: 487, hangup_by: 'gateway' });
  await until(() => rig.ports.inUse === 0, 'the RTP port to be released');
  t.equal(rig.ended.length, 1, 'the service was told of the end once');
});

t.test('RFC 3261 9.1: a hang-up while ringing sends CANCEL; the call ends canceled by the api', async (t) => {
  const rig = await callRig(t);
  const id = await placeCall(rig);
  const invite = await rig.phone.invite();
  let cancelled = false;
  invite.events.on('cancel', () => { cancelled = true; });
  invite.progress(180);
  await until(() => recordOf(rig, id).state === 'ringing', 'ringing');
  await rig.service.hangup(TENANT, id);
  t.ok(cancelled, 'the phone saw CANCEL before the hang-up returned');
  t.match(await finalRecord(rig, id), { end_reason: 'canceled', sip_status: 487, hangup_by: 'api' });
});

t.test('RFC 3261 21.4 / docs/DECISIONS.md "What ended an attempt": a final failure ends the call with its reason, status and the callee as who hung up', async (t) => {
  const cases: [number, string][] = [[486, 'busy'], [603, 'declined'], [404, 'not_found'], [503, 'unavailable'], [480, 'no_answer']];
  const rig = await callRig(t);
  for (const [status, reason] of cases) {
    const id = await placeCall(rig);
    const invite = await rig.phone.invite(rig.phone.invites.length + 1);
    invite.reject(status);
    t.match(await finalRecord(rig, id), { end_reason: reason, sip_status: status, hangup_by: 'callee', answered_at: null }, `${status} is ${reason}`);
  }
  await until(() => rig.ports.inUse === 0, 'every RTP port released');
});

t.test('RFC 3264 6 / RFC 3261 13.2.1: an answer with no codec in common is ended with BYE, failed 488', async (t) => {
  const rig = await callRig(t);
  const id = await placeCall(rig);
  const invite = await rig.phone.invite();
  let bye = false;
  const dialog = invite.accept(rig.phone.sdp({ codecs: [[9, 'G722']] }));
  dialog?.events.on('bye', () => { bye = true; });
  t.match(await finalRecord(rig, id), { end_reason: 'failed', sip_status: 488, hangup_by: 'gateway' });
  await until(() => bye, 'the BYE at the phone');
  t.equal(rig.agents.links.length, 0, 'no agent was connected');
});

t.test('docs/DECISIONS.md "The agent connects on answer": an agent that cannot be reached ends the answered call agent_unreachable with BYE', async (t) => {
  const rig = await callRig(t);
  rig.agents.refuse = true;
  const id = await placeCall(rig);
  const invite = await rig.phone.invite();
  let bye = false;
  invite.accept(rig.phone.sdp())?.events.on('bye', () => { bye = true; });
  t.match(await finalRecord(rig, id), { end_reason: 'agent_unreachable', hangup_by: 'gateway', sip_status: null });
  await until(() => bye, 'the BYE at the phone');
});

t.test('RFC 3261 9.1 / 17.1.1.2: a carrier that sent only 100 Trying is still cancelled at the ring time-out (no Timer B in Proceeding)', async (t) => {
  const rig = await callRig(t);
  const id = await placeCall(rig);
  const invite = await rig.phone.invite();
  let cancelled = false;
  invite.events.on('cancel', () => { cancelled = true; });
  // The phone's user agent sent 100 Trying on its own; nothing more comes.
  await until(() => rig.ports.inUse === 1, 'the call\'s RTP port');
  rig.clock.advance(RING_TIMEOUT_MS);
  await until(() => cancelled, 'the CANCEL at the phone');
  t.match(await finalRecord(rig, id), { end_reason: 'no_answer', sip_status: 487, hangup_by: 'gateway', ringing_at: null });
});
