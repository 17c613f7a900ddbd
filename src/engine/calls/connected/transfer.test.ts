/**
 * @module Transfer over real SIP and RTP on loopback, on the fake clock: the bridge method (dial
 * the target, release the agent, bridge the media) and REFER (RFC 3515), with their outcomes in
 * the call record (`transfer_state`) and the end of the call they lead to.
 */
import t from 'tap';
import type { ReferNotifier } from '../../sip/index.js';
import { answeredCall, callRig, finalRecord, recordOf, RING_TIMEOUT_MS, TENANT, until, type CallRig } from '../../../../test/support/call-engine-rig.js';

const TARGET = '+15550777';

async function transfer(rig: CallRig, id: string): Promise<unknown> {
  return rig.service.transfer(TENANT, recordOf(rig, id).call_control_id, TARGET);
}

t.test('docs/DECISIONS.md "Transfer" (bridge): the target answers, the agent is released and the remote party is bridged to the target', async (t) => {
  const rig = await callRig(t);
  const { id, link } = await answeredCall(rig);
  t.match(await transfer(rig, id), { call: { transfer_to: TARGET, transfer_state: 'dialing' } });
  const invite = await rig.phone.invite(2);
  t.match(invite.request.uri, /^sip:\+15550777@127\.0\.0\.1:/, 'the target is dialled over the call\'s carrier');
  t.match(invite.request.headers.get('From') ?? '', /sip:\+15550100@/, 'with the call\'s own number as caller id');
  t.equal(link.closedWith, null, 'the agent stays while the target rings');
  invite.accept(rig.phone.sdp());
  await until(() => recordOf(rig, id).transfer_state === 'connected', 'transfer connected');
  t.equal(link.closedWith, 'transferred', 'the agent is released once the target answered');
  t.ok(recordOf(rig, id).transfer_started_at, 'transfer_started_at is set');
  // The remote party's audio now reaches the target's leg (both legs end at the phone's socket here).
  const session = rig.service.sessionOf(TENANT, id) as { remote: { local_rtp_port: number }; transfer: { target: { rtp_port: number } } };
  const before = rig.phone.rtp.received.filter((d) => d.port === session.transfer.target.rtp_port).length;
  for (let seq = 1; seq <= 5; seq++) {
    await rig.phone.rtp.sendRtp(session.remote.local_rtp_port, { payloadType: 0, sequenceNumber: seq, timestamp: seq * 160, ssrc: 0x77, marker: false }, new Uint8Array(160).fill(0x55));
    rig.clock.advance(20);
  }
  await until(() => rig.phone.rtp.received.filter((d) => d.port === session.transfer.target.rtp_port).length > before, 'relayed audio from the target leg');
  t.pass('the remote party\'s RTP is relayed to the target');
});

t.test('docs/DECISIONS.md "Transfer": a target that refuses leaves the call active with its agent; transfer_state failed', async (t) => {
  const rig = await callRig(t);
  const { id, link } = await answeredCall(rig);
  await transfer(rig, id);
  t.same(await transfer(rig, id), { error: 'transfer_in_progress' }, 'one transfer at a time');
  (await rig.phone.invite(2)).reject(486);
  await until(() => recordOf(rig, id).transfer_state === 'failed', 'transfer failed');
  t.equal(recordOf(rig, id).state, 'active');
  t.equal(link.closedWith, null, 'the agent is still on the call');
  t.match(await transfer(rig, id), { call: { transfer_state: 'dialing' } }, 'another transfer may follow');
});

t.test('RFC 3261 9.1 / docs/CONFIGURATION.md calls.ring_timeout_seconds: a target that does not answer is cancelled; the transfer fails', async (t) => {
  // The silence of the remote party would end the call first (media_timeout); here it is off.
  const rig = await callRig(t, { timings: { mediaTimeoutMs: 0 } });
  const { id } = await answeredCall(rig);
  await transfer(rig, id);
  const invite = await rig.phone.invite(2);
  let cancelled = false;
  invite.events.on('cancel', () => { cancelled = true; });
  invite.progress(180);
  await until(() => rig.phone.invites.length === 2, 'the INVITE');
  rig.clock.advance(RING_TIMEOUT_MS);
  await until(() => cancelled, 'the CANCEL at the target');
  await until(() => recordOf(rig, id).transfer_state === 'failed', 'transfer failed');
  t.equal(recordOf(rig, id).state, 'active', 'the call goes on');
});

t.test('docs/DECISIONS.md "End reasons": the target hanging up ends a bridged call completed by the callee, with BYE to the remote party', async (t) => {
  const rig = await callRig(t);
  const { id, dialog } = await answeredCall(rig);
  let bye = false;
  dialog.events.on('bye', () => { bye = true; });
  await transfer(rig, id);
  const target = (await rig.phone.invite(2)).accept(rig.phone.sdp())!;
  await until(() => recordOf(rig, id).transfer_state === 'connected', 'transfer connected');
  t.equal(await target.bye(), 200);
  t.match(await finalRecord(rig, id), { end_reason: 'completed', hangup_by: 'callee', transfer_state: 'connected' });
  await until(() => bye, 'the BYE to the remote party');
  await until(() => rig.ports.inUse === 0, 'both RTP ports freed');
});

t.test('RFC 3261 9.1: a call hung up while its transfer dials cancels the target; the record says the transfer failed', async (t) => {
  const rig = await callRig(t);
  const { id } = await answeredCall(rig);
  await transfer(rig, id);
  const invite = await rig.phone.invite(2);
  let cancelled = false;
  invite.events.on('cancel', () => { cancelled = true; });
  invite.progress(180);
  await until(() => rig.ports.inUse === 2, 'the target leg\'s RTP port');
  await rig.service.hangup(TENANT, id);
  await until(() => cancelled, 'the CANCEL at the target');
  t.match(await finalRecord(rig, id), { end_reason: 'completed', hangup_by: 'api', transfer_state: 'failed' });
  await until(() => rig.ports.inUse === 0, 'both RTP ports freed');
});

async function referred(rig: CallRig): Promise<{ id: string; notifier: ReferNotifier; to: string; bye: () => boolean; link: { closedWith: string | null } }> {
  const { id, dialog, link } = await answeredCall(rig);
  let bye = false;
  dialog.events.on('bye', () => { bye = true; });
  const refer = new Promise<[string, ReferNotifier]>((resolve) => dialog.events.on('refer', (to, notifier) => resolve([to, notifier])));
  await transfer(rig, id);
  const [to, notifier] = await refer;
  return { id, notifier, to, bye: () => bye, link };
}

t.test('RFC 3515 2.4.5 / RFC 5589 6: REFER, then a NOTIFY 200 ends the call transferred with BYE', async (t) => {
  const rig = await callRig(t, { carrier: { transfer: 'refer' } });
  const { id, notifier, to, bye, link } = await referred(rig);
  t.match(to, /^sip:\+15550777@127\.0\.0\.1:/, 'Refer-To names the target at the carrier');
  await until(() => link.closedWith === 'transferred', 'the agent released on 202');
  t.equal(recordOf(rig, id).transfer_state, 'dialing', 'accepted is not done (RFC 3515 2.4.2)');
  void notifier.notify(200, 'OK');
  t.match(await finalRecord(rig, id), { end_reason: 'transferred', hangup_by: 'api', transfer_state: 'connected' });
  await until(bye, 'the BYE after the transfer');
});

t.test('RFC 3515 2.4.5: a NOTIFY with a failure ends the call failed with its status (the agent is gone)', async (t) => {
  const rig = await callRig(t, { carrier: { transfer: 'refer' } });
  const { id, notifier, bye, link } = await referred(rig);
  await until(() => link.closedWith === 'transferred', 'the agent released on 202');
  void notifier.notify(486, 'Busy Here');
  t.match(await finalRecord(rig, id), { end_reason: 'failed', sip_status: 486, hangup_by: 'gateway', transfer_state: 'failed' });
  await until(bye, 'the BYE to the remote party');
});
