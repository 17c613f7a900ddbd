/**
 * @module CallService, the engine's side of the call commands, on the fake clock with real SIP on
 * loopback: admission (carrier, draining, limits, storage), inbound admission answered on the
 * wire (404, 503 with Retry-After), and commands on live, ended and foreign calls (docs/API.md
 * "Call commands").
 */
import t from 'tap';
import { answeredCall, callRig, dialGateway, finalRecord, HELD_NUMBERS, OTHER_TENANT, placeCall, recordOf, TENANT, until } from '../../../test/support/call-engine-rig.js';

const request = { tenantId: TENANT, carrier: 'unit', from: '+15550100', to: '+15550199', record: false, agentUrl: 'wss://agent.example/stream' };

t.test('docs/API.md "Call commands": unknown carrier, draining and a carrier without outbound calls are refused before anything is sent', async (t) => {
  const rig = await callRig(t, { carrier: { outboundUri: null } });
  t.same(await rig.service.place({ ...request, carrier: 'nope' }), { error: 'unknown_carrier' });
  t.match(await rig.service.place(request), { error: 'carrier_unavailable' });
  rig.draining.value = true;
  t.match(await rig.service.place(request), { error: 'unavailable' });
  t.equal(rig.store.records.size, 0, 'no call was recorded');
  t.equal(rig.ports.inUse, 0, 'no RTP port was taken');
});

t.test('docs/API.md "Call commands": a tenant over its limit gets concurrency_limit with Retry-After; an ended call frees its slot', async (t) => {
  const rig = await callRig(t, { service: { maxConcurrentPerTenant: 1 } });
  const first = await placeCall(rig);
  (await rig.phone.invite()).progress(180);
  await until(() => recordOf(rig, first).state === 'ringing', 'ringing');
  t.same(await rig.service.place(request), { error: 'concurrency_limit', retryAfterSeconds: 5 });
  const other = await rig.service.place({ ...request, tenantId: OTHER_TENANT, from: HELD_NUMBERS[OTHER_TENANT]! });
  t.match(other, { call: { state: 'initiated' } }, 'another tenant has its own limit');
  await rig.service.hangup(TENANT, first);
  await finalRecord(rig, first);
  const again = await rig.service.place(request);
  t.match(again, { call: { state: 'initiated' } }, 'the slot is free again');
});

t.test('docs/RELIABILITY.md storage failures: a call that cannot be recorded is not placed, and its RTP port is released', async (t) => {
  const rig = await callRig(t);
  rig.store.refuseInserts = true;
  await t.rejects(rig.service.place(request), /storage unavailable/);
  t.equal(rig.ports.inUse, 0);
  t.equal(rig.phone.invites.length, 0, 'no INVITE was sent');
});

t.test('RFC 3261 21.4.5: an INVITE to an unrouted number gets 404 and leaves no call', async (t) => {
  const rig = await callRig(t);
  const dial = dialGateway(rig, { did: '+15559999' });
  await until(() => dial.final !== null, 'the final response');
  t.equal(dial.final, 404);
  t.equal(rig.store.records.size, 0);
});

t.test('RFC 3261 21.5.4 / docs/RELIABILITY.md draining: an INVITE while draining gets 503 with Retry-After of the drain time', async (t) => {
  const rig = await callRig(t);
  rig.draining.value = true;
  let retryAfter: string | undefined;
  const dial = dialGateway(rig);
  dial.call.events.on('failed', (_status, _reason, response) => { retryAfter = response?.headers.get('Retry-After'); });
  await until(() => dial.final !== null, 'the final response');
  t.equal(dial.final, 503);
  t.equal(retryAfter, '30');
  t.equal(rig.store.records.size, 0);
});

t.test('RFC 3261 21.5.4: an INVITE over the carrier\'s limit gets 503, and the live call is untouched', async (t) => {
  const rig = await callRig(t, { carrier: { maxConcurrentCalls: 1 } });
  const { id } = await answeredCall(rig);
  const dial = dialGateway(rig);
  await until(() => dial.final !== null, 'the final response');
  t.equal(dial.final, 503);
  t.equal(recordOf(rig, id).state, 'active');
  t.equal(rig.store.records.size, 1, 'the refused INVITE left no record');
});

t.test('docs/API.md "Call commands": commands on unknown, foreign and ended calls; transfer by call_control_id', async (t) => {
  const rig = await callRig(t);
  const { id } = await answeredCall(rig);
  const controlId = recordOf(rig, id).call_control_id;
  t.same(await rig.service.hangup(TENANT, 'call_unknown'), { error: 'not_found' });
  t.same(await rig.service.hangup(OTHER_TENANT, id), { error: 'not_found' }, 'another tenant\'s call is not found');
  t.same(await rig.service.transfer(OTHER_TENANT, controlId, '+15550777'), { error: 'not_found' });
  t.equal(rig.service.sessionOf(OTHER_TENANT, id), null);
  t.equal(recordOf(rig, id).state, 'active', 'the foreign commands did nothing');
  await rig.service.hangup(TENANT, id);
  t.same(await rig.service.unhold(TENANT, id), { error: 'call_not_active' });
  t.same(await rig.service.transfer(TENANT, controlId, '+15550777'), { error: 'call_not_active' });
  t.equal(rig.service.sessionOf(TENANT, id), null, 'an ended call has no live session');
});

t.test('docs/API.md "Call commands": commands before the answer answer call_not_active; the setup session is shown', async (t) => {
  const rig = await callRig(t);
  const id = await placeCall(rig);
  (await rig.phone.invite()).progress(180);
  await until(() => recordOf(rig, id).state === 'ringing', 'ringing');
  t.same(await rig.service.hold(TENANT, id), { error: 'call_not_active' });
  t.same(await rig.service.transfer(TENANT, recordOf(rig, id).call_control_id, '+15550777'), { error: 'call_not_active' });
  t.match(rig.service.sessionOf(TENANT, id), { phase: 'setup' });
});

t.test('docs/RELIABILITY.md shutdown: shutdown hangs up every live call gateway_shutdown and tells the service of each end', async (t) => {
  const rig = await callRig(t);
  const a = await answeredCall(rig);
  const ringing = await placeCall(rig);
  (await rig.phone.invite(2)).progress(180);
  await until(() => recordOf(rig, ringing).state === 'ringing', 'ringing');
  let bye = false;
  a.dialog.events.on('bye', () => { bye = true; });
  await rig.service.shutdown();
  t.ok(bye, 'the answered call got BYE');
  t.match(await finalRecord(rig, a.id), { end_reason: 'gateway_shutdown', hangup_by: 'gateway' });
  t.match(await finalRecord(rig, ringing), { end_reason: 'gateway_shutdown', sip_status: 487 });
  t.same(rig.ended.map((c) => c.id).sort(), [a.id, ringing].sort(), 'onCallEnded got both final records');
  t.equal(rig.service.registry.all().length, 0);
});
