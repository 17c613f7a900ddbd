/**
 * @module ConnectedCall, an answered call, over real SIP and RTP on loopback and the fake clock:
 * BYE on hang-up, the remote party's BYE, media_timeout, API and remote hold, the agent hanging
 * up, out-of-band DTMF, and the end reasons and `hangup_by` of docs/API.
 */
import t from 'tap';
import {
  answeredCall, callRig, finalRecord, MEDIA_TIMEOUT_MS, OTHER_TENANT, recordOf, TENANT, until,
} from '../../../../test/support/call-engine-rig.js';

t.test('RFC 3261 15.1.1: an API hang-up sends BYE; the call ends completed by the api and frees its media', async (t) => {
  const rig = await callRig(t);
  const { id, dialog, link } = await answeredCall(rig);
  let byes = 0;
  dialog.events.on('bye', () => { byes++; });
  const result = await rig.service.hangup(TENANT, id);
  t.match(result, { call: { state: 'ended' } });
  t.equal(byes, 1, 'the phone got BYE before the hang-up resolved');
  t.match(await finalRecord(rig, id), { end_reason: 'completed', hangup_by: 'api', sip_status: null });
  t.ok(link.closedWith, 'the agent link was closed');
  t.equal(rig.ports.inUse, 0, 'the RTP port is free');
  t.same(await rig.service.hangup(TENANT, id), { error: 'call_not_active' }, 'a second hang-up is a state conflict');
  t.equal(byes, 1, 'and sends no second BYE');
  t.equal(rig.store.finished.filter((o) => o.call.id === id).length, 1, 'one final record');
});

t.test('RFC 3261 15.1.2: the callee\'s BYE ends the call completed by the callee, without a BYE back', async (t) => {
  const rig = await callRig(t);
  const { id, dialog, link } = await answeredCall(rig);
  t.equal(await dialog.bye(), 200, 'the gateway answers the BYE with 200');
  t.match(await finalRecord(rig, id), { end_reason: 'completed', hangup_by: 'callee' });
  t.equal(link.closedWith, 'call ended', 'the agent is told the call ended');
  await until(() => rig.ports.inUse === 0, 'the RTP port to be freed');
});

t.test('docs/CONFIGURATION.md calls.media_timeout_seconds: silence from the remote party ends the call media_timeout with BYE', async (t) => {
  const rig = await callRig(t);
  const { id, dialog } = await answeredCall(rig);
  let bye = false;
  dialog.events.on('bye', () => { bye = true; });
  const port = (rig.service.sessionOf(TENANT, id) as { remote: { local_rtp_port: number } }).remote.local_rtp_port;
  await rig.phone.rtp.sendRtp(port, { payloadType: 0, sequenceNumber: 1, timestamp: 160, ssrc: 0x1234, marker: false }, new Uint8Array(160).fill(0xff));
  await until(() => (rig.service.sessionOf(TENANT, id) as { remote: { packets_received: number } }).remote.packets_received === 1, 'the packet to arrive');
  rig.clock.advance(MEDIA_TIMEOUT_MS - 1000);
  t.equal(recordOf(rig, id).state, 'active', 'heard recently enough: still active');
  rig.clock.advance(1000);
  t.match(await finalRecord(rig, id), { end_reason: 'media_timeout', hangup_by: 'gateway', sip_status: null });
  await until(() => bye, 'the BYE at the phone');
});

t.test('docs/API.md "Call commands": hold and unhold reach the agent and the record; an ended call answers call_not_active', async (t) => {
  const rig = await callRig(t);
  const { id, link } = await answeredCall(rig);
  t.match(await rig.service.hold(TENANT, id), { call: { on_hold: true } });
  t.equal(recordOf(rig, id).on_hold, true, 'on_hold is stored');
  t.match(await rig.service.unhold(TENANT, id), { call: { on_hold: false } });
  t.same(link.holdEvents, ['hold:api', 'unhold:api']);
  t.same(await rig.service.hold(OTHER_TENANT, id), { error: 'not_found' }, 'another tenant cannot see the call');
  await rig.service.hangup(TENANT, id);
  t.same(await rig.service.hold(TENANT, id), { error: 'call_not_active' });
});

t.test('RFC 3264 8.4 / docs/DECISIONS.md "Hold and media direction": the remote party\'s own hold reaches the agent as source remote', async (t) => {
  const rig = await callRig(t);
  const { id, dialog, link } = await answeredCall(rig);
  const held = await dialog.reinvite(rig.phone.sdp({ direction: 'sendonly', version: 2 }));
  t.equal(held.status, 200);
  t.match('body' in held ? held.body.toString() : '', /a=recvonly/, 'our answer to sendonly is recvonly');
  await until(() => link.holdEvents.length === 1, 'the agent to hear of the hold');
  t.same(link.holdEvents, ['hold:remote']);
  t.equal(recordOf(rig, id).on_hold, false, 'the API hold (on_hold) is not the remote party\'s');
  const resumed = await dialog.reinvite(rig.phone.sdp({ version: 3 }));
  t.match('body' in resumed ? resumed.body.toString() : '', /a=sendrecv/);
  await until(() => link.holdEvents.length === 2, 'the agent to hear of the resume');
  t.same(link.holdEvents, ['hold:remote', 'unhold:remote']);
});

t.test('docs/DECISIONS.md "End reasons": the agent hanging up ends the call completed by the agent, with BYE to the remote party', async (t) => {
  const rig = await callRig(t);
  const { id, dialog, link } = await answeredCall(rig);
  let bye = false;
  dialog.events.on('bye', () => { bye = true; });
  link.hangUp();
  t.match(await finalRecord(rig, id), { end_reason: 'completed', hangup_by: 'agent' });
  await until(() => bye, 'the BYE at the phone');
});

t.test('docs/DECISIONS.md "End reasons": an agent error ends the call agent_error, by the agent', async (t) => {
  const rig = await callRig(t);
  const { id, link } = await answeredCall(rig);
  link.handlers.onClose?.({ by: 'error', code: 1011, reason: 'internal' });
  t.match(await finalRecord(rig, id), { end_reason: 'agent_error', hangup_by: 'agent' });
});

t.test('docs/DECISIONS.md "DTMF from the remote party, however it comes": a key sent by SIP INFO reaches the agent', async (t) => {
  const rig = await callRig(t);
  const { dialog, link } = await answeredCall(rig);
  t.equal(await dialog.info(Buffer.from('Signal=7\r\nDuration=160\r\n'), 'application/dtmf-relay'), 200);
  await until(() => link.dtmf.length === 1, 'the digit at the agent');
  t.same(link.dtmf, ['7']);
});

t.test('docs/DECISIONS.md "Transcript choice": conversation id and provider transcript turns are written with the final record', async (t) => {
  const rig = await callRig(t);
  const { id, link } = await answeredCall(rig);
  link.handlers.onConversationId?.('conv_1');
  rig.clock.advance(2000);
  link.handlers.onTranscript?.({ role: 'agent', text: 'Hello there', final: true });
  link.handlers.onTranscript?.({ role: 'caller', text: 'Hel', final: false });
  await rig.service.hangup(TENANT, id);
  const outcome = rig.store.finished.find((o) => o.call.id === id)!;
  t.equal(outcome.call.conversation_id, 'conv_1');
  t.same(outcome.transcripts, [{ source: 'provider', turns: [{ role: 'agent', text: 'Hello there', offset_s: 2 }] }], 'final turns only, timed from the answer');
});
