/**
 * Inbound sip_trunk calls against real peers (docs/DECISIONS.md "Calls"): sipp as the carrier
 * calls a tenant's DID; the gateway dials the agent platform's SIP edge, a second sipp that
 * challenges with digest (401), rings and answers, and echoes RTP (`-rtp_echo`) as the agent's
 * voice. The carrier plays the Debian g711a.pcap (PCMA) while the edge answers PCMU, so the
 * anchored bridge transcodes both ways.
 */
import t from 'tap';
import type { ApiBody, TestGateway } from '../support/gateway-harness.js';
import { pcm16Tone } from '../support/inbound-pcm-audio.js';
import {
  channelRms, detailWhen, EDGE_USER, ended, inboundCall, pcmRms, requestsIn, sippMessages, sippPassed, startCarrier, startInboundRig, startMediaBridgeRig,
} from '../support/inbound-sipp-rig.js';
import { needPeer } from '../support/peers.js';

interface LegStats {
  remote?: { packets_received?: number; packets_sent?: number };
  agent?: { kind?: string; rtp?: { packets_received?: number; packets_sent?: number } | null };
}

const statsOf = (d: ApiBody): LegStats => (d.session ?? {}) as LegStats;

/** The gateway's log lines about call `id`, without the per-packet ones. */
function gatewayLog(gw: TestGateway, id: string): string {
  return gw.logs.filter((l) => l.call_id === id && !/rtp|rtcp/i.test(String(l.msg))).map((l) => `${String(l.time)} ${String(l.level)} ${String(l.msg)} ${JSON.stringify(l.reason ?? l.err ?? '')}`).join('\n');
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

t.test('RFC 3261 22.2 and 15.1.1: the carrier calls the DID, the edge is reached with digest credentials, audio flows both ways, the carrier hangs up', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const rig = await startInboundRig(t, { edgeScenario: 'inbound-edge-auth.xml' });
  const carrier = await rig.call('inbound-uac-talk-bye.xml', ['-d', '3000']);
  const live = await inboundCall(rig.gw, rig.did);
  t.equal(live.direction, 'inbound', 'the call is listed as inbound');
  t.equal(live.from, '+15557770020', "the caller's number in E.164");

  // Caller audio crossed the bridge to the edge (whose echo came back), and the echo went on to the caller.
  const talking = await detailWhen(rig.gw, live.id, 'packets on both legs', (d) => {
    const s = statsOf(d);
    return (s.remote?.packets_received ?? 0) >= 40 && (s.agent?.rtp?.packets_received ?? 0) >= 40 && (s.remote?.packets_sent ?? 0) >= 40;
  });
  const s = statsOf(talking);
  t.equal(talking.direction, 'inbound', 'the detail says inbound');
  t.equal(s.agent?.kind, 'sip_trunk');
  t.pass(`RTP both ways: caller leg ${s.remote?.packets_received} in / ${s.remote?.packets_sent} out, edge leg ${s.agent?.rtp?.packets_sent} out / ${s.agent?.rtp?.packets_received} in`);

  await sippPassed(t, carrier, 'the carrier (BYE answered 200)');
  await sippPassed(t, rig.edge, 'the edge (challenge met, BYE received)');
  const done = await ended(rig.gw, live.id);
  t.match(done.cdr, { end_reason: 'completed', hangup_by: 'caller' });

  const invites = requestsIn(sippMessages(rig.edge), 'INVITE');
  const authorized = invites.find((m) => /^Authorization:\s*Digest /im.test(m));
  t.ok(authorized, 'the INVITE after the 401 carries Authorization');
  t.match(authorized, new RegExp(`username="${EDGE_USER}"`), 'for the stored SIP credential');
  t.match(authorized, new RegExp(`^X-Call-Id:\\s*${live.id}\\s*$`, 'im'), 'and names the call for the platform');

  const recorded = await detailWhen(rig.gw, live.id, 'recording', (d) => d.recording.available);
  t.ok(recorded.recording.available);
  const response = await fetch(`${rig.gw.base}/v1/calls/${live.id}/recording`, { headers: { authorization: `Bearer ${rig.gw.liveKey}` } });
  const [caller, agent] = channelRms(Buffer.from(await response.arrayBuffer()));
  t.ok(caller > 100, `the recording's caller channel holds the pcap's speech (RMS ${caller.toFixed(0)})`);
  t.ok(agent > 100, `the agent channel holds the edge's echo of it (RMS ${agent.toFixed(0)})`);
});

t.test('RFC 3261 15.1.2: the agent edge hangs up with BYE; the gateway ends the caller leg with BYE', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const rig = await startInboundRig(t, { edgeScenario: 'inbound-edge-auth-bye.xml', edgeArgs: ['-d', '1500'] });
  const carrier = await rig.call('inbound-uac-wait-bye.xml');
  const live = await inboundCall(rig.gw, rig.did);
  await sippPassed(t, rig.edge, 'the edge (its BYE answered 200)');
  await sippPassed(t, carrier, 'the carrier (BYE from the gateway answered)');
  const done = await ended(rig.gw, live.id);
  t.match(done.cdr, { end_reason: 'completed', hangup_by: 'agent' }, 'the agent ended the call');
  t.ok(done.answered_at, 'after the answer');
});

t.test('RFC 3261 9.1 and 9.2: CANCEL from the carrier while the edge rings reaches the edge; 487 both ways', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const rig = await startInboundRig(t, { edgeScenario: 'inbound-edge-ring.xml' });
  const carrier = await rig.call('inbound-uac-cancel.xml');
  await sippPassed(t, carrier, 'the carrier (180 seen, CANCEL 200, INVITE 487)');
  await sippPassed(t, rig.edge, 'the edge (CANCEL received, 487 ACKed)');
  const live = await inboundCall(rig.gw, rig.did);
  const done = await ended(rig.gw, live.id);
  t.equal(done.end_reason, 'canceled');
  t.equal(done.cdr?.hangup_by, 'caller');
  t.equal(done.answered_at, null, 'never answered');
  t.equal(requestsIn(sippMessages(rig.edge), 'CANCEL').length > 0, true, "the CANCEL is in the edge's log");
});

t.test('RFC 3515 2.4.2: a REFER from the carrier is declined (603); no INVITE goes to its target and the call goes on', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const rig = await startInboundRig(t, { edgeScenario: 'inbound-edge-auth.xml', transferTarget: true });
  const carrier = await rig.call('inbound-uac-refer.xml');
  const live = await inboundCall(rig.gw, rig.did);
  await sippPassed(t, carrier, 'the carrier (REFER declined with 603, then its BYE answered)');
  await sippPassed(t, rig.edge, 'the edge (BYE received)');
  const done = await ended(rig.gw, live.id);
  t.match(done.cdr, { end_reason: 'completed', hangup_by: 'caller' }, 'the caller hung up; nothing was transferred');
  t.equal(done.transfer ?? null, null, 'no transfer on the record');
  t.equal(requestsIn(sippMessages(rig.target!), 'INVITE').length, 0, "the carrier's outbound URI got no INVITE");
});

t.test('RFC 3262 3: a carrier requiring 100rel gets its 180 reliably (Require, RSeq), PRACKs it, and the call is answered', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const rig = await startInboundRig(t, { edgeScenario: 'inbound-edge-auth.xml' });
  const carrier = await rig.call('inbound-uac-100rel.xml');
  const live = await inboundCall(rig.gw, rig.did);
  await sippPassed(t, carrier, 'the carrier (reliable 180, PRACK answered 200, INVITE answered, BYE answered)');
  await sippPassed(t, rig.edge, 'the edge (BYE received)');
  const done = await ended(rig.gw, live.id);
  t.match(done.cdr, { end_reason: 'completed', hangup_by: 'caller' });
  t.ok(done.answered_at, 'answered');
  const log = sippMessages(carrier).replace(/\r/g, '');
  const blocks = log.split(/\n(?=-{10,})/);
  const ringing = blocks.filter((block) => /^SIP\/2\.0 180 /m.test(block));
  t.ok(ringing.length >= 1 && ringing.every((block) => /^Require: 100rel$/m.test(block) && /^RSeq: \d+$/m.test(block)), 'every 180 the carrier got is reliable');
  t.ok(blocks.some((block) => /^SIP\/2\.0 200 /m.test(block) && /^CSeq: 2 PRACK$/m.test(block)), 'the PRACK got 200');
});

t.test('docs/API.md "Calls": hold, unhold and hangup over the API work on an inbound call', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const rig = await startInboundRig(t, { edgeScenario: 'inbound-edge-auth.xml' });
  const carrier = await rig.call('inbound-uac-wait-bye.xml');
  const live = await inboundCall(rig.gw, rig.did);
  await detailWhen(rig.gw, live.id, 'active', (d) => d.state === 'active');
  const key = { key: rig.gw.liveKey };

  // The carrier's pcap (8 s) is playing: while held, none of it may be relayed to the edge, which
  // gets silence instead (its content: media-bridge.test.ts; remote-hold-sipp.test.ts counts it).
  await detailWhen(rig.gw, live.id, 'caller audio at the edge', (d) => (statsOf(d).agent?.rtp?.packets_sent ?? 0) >= 10);
  const held = await rig.gw.api('POST', `/v1/calls/${live.id}/hold`, undefined, key);
  t.equal(held.status, 200, JSON.stringify(held.body));
  t.equal(held.body.on_hold, true);
  const paused = await rig.gw.api('GET', `/v1/calls/${live.id}`, undefined, key);
  t.equal(paused.body.session?.recording?.paused, true, 'the recording is paused while held');
  const toEdgeAtHold = statsOf(paused.body).agent?.rtp?.packets_sent ?? 0;
  await sleep(600); // 30 packet times of the caller's speech
  const stillHeld = await rig.gw.api('GET', `/v1/calls/${live.id}`, undefined, key);
  const relayedWhileHeld = (statsOf(stillHeld.body).agent?.rtp?.packets_sent ?? 0) - toEdgeAtHold;
  t.ok(relayedWhileHeld >= 15, `the edge gets RTP, silence, while held (${relayedWhileHeld} packets in 600 ms)`);

  const unheld = await rig.gw.api('POST', `/v1/calls/${live.id}/unhold`, undefined, key);
  t.equal(unheld.body.on_hold, false);
  const resumed = await detailWhen(rig.gw, live.id, 'caller audio at the edge again', (d) => (statsOf(d).agent?.rtp?.packets_sent ?? 0) >= toEdgeAtHold + relayedWhileHeld + 10);
  t.equal(resumed.session?.recording?.paused, false, 'after unhold the caller reaches the edge again and the recording resumes');

  const hung = await rig.gw.api('POST', `/v1/calls/${live.id}/hangup`, undefined, key);
  t.equal(hung.status, 200, JSON.stringify(hung.body));
  t.equal(hung.body.state, 'ended');
  await sippPassed(t, carrier, 'the carrier (BYE from the gateway)');
  await sippPassed(t, rig.edge, 'the edge (BYE from the gateway)');
  const done = await ended(rig.gw, live.id);
  t.match(done.cdr, { end_reason: 'completed', hangup_by: 'api' });
});

t.test('docs/API.md "Calls": blind transfer of an inbound call dials the target at the carrier, releases the edge, and bridges the caller', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const rig = await startInboundRig(t, { edgeScenario: 'inbound-edge-auth.xml', transferTarget: true });
  const target = rig.target!;
  const carrier = await rig.call('inbound-uac-wait-bye.xml');
  const live = await inboundCall(rig.gw, rig.did);
  await detailWhen(rig.gw, live.id, 'active', (d) => d.state === 'active');
  const key = { key: rig.gw.liveKey };

  // Once the agent side is up (see the next test for a transfer that comes sooner).
  await detailWhen(rig.gw, live.id, 'agent side up', (d) => statsOf(d).agent?.kind === 'sip_trunk');
  const transferred = await rig.gw.api('POST', '/v1/calls/transfer', { call_control_id: live.call_control_id, to: '+15550142' }, key);
  t.equal(transferred.status, 200, JSON.stringify(transferred.body));
  const connected = await detailWhen(rig.gw, live.id, 'transfer connected', (d) => d.transfer?.state === 'connected');
  t.equal(connected.state, 'active');
  // Bounded, so that a missing BYE fails this check alone and the hang-up below still runs.
  const edgeDone = await Promise.race([rig.edge.run.done, sleep(10_000).then(() => null)]);
  t.equal(edgeDone?.code, 0, 'the edge is released with BYE once the target answered');
  if (edgeDone?.code !== 0) t.comment(sippMessages(rig.edge).slice(-1500), gatewayLog(rig.gw, live.id));
  const targetInvite = requestsIn(sippMessages(target), 'INVITE')[0] ?? '';
  t.match(targetInvite, /^INVITE sip:\+15550142@/m, "the target's INVITE names the transfer number");

  // With the edge gone, only the bridge to the target sends RTP to the caller: the target's echo
  // of the caller's pcap. So the caller leg's sent count keeps growing only if audio flows both
  // ways between caller and target.
  const atConnect = statsOf(connected).remote?.packets_sent ?? 0;
  const bridged = await detailWhen(rig.gw, live.id, "the target's echo at the caller", (d) => (statsOf(d).remote?.packets_sent ?? 0) >= atConnect + 25);
  t.pass(`the caller leg sent ${(statsOf(bridged).remote?.packets_sent ?? 0) - atConnect} packets from the target since the transfer connected`);

  const hung = await rig.gw.api('POST', `/v1/calls/${live.id}/hangup`, undefined, key);
  t.equal(hung.body.state, 'ended');
  await sippPassed(t, carrier, 'the carrier (BYE from the gateway)');
  await sippPassed(t, target, 'the transfer target (BYE from the gateway)');
});

t.test('docs/API.md "Calls": a transfer accepted right after the answer also releases the edge (BYE)', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const rig = await startInboundRig(t, { edgeScenario: 'inbound-edge-auth.xml', transferTarget: true });
  const carrier = await rig.call('inbound-uac-wait-bye.xml');
  const live = await inboundCall(rig.gw, rig.did);
  const key = { key: rig.gw.liveKey };
  // The transfer is asked for again and again from the ringing on, so the first one accepted
  // comes as soon as the call is answered, while the call is still opening its recording and
  // its agent side. Accepted, it must let the edge go like any other transfer.
  let transferred = await rig.gw.api('POST', '/v1/calls/transfer', { call_control_id: live.call_control_id, to: '+15550142' }, key);
  for (let tries = 0; transferred.status !== 200 && tries < 2000; tries++) {
    transferred = await rig.gw.api('POST', '/v1/calls/transfer', { call_control_id: live.call_control_id, to: '+15550142' }, key);
  }
  t.equal(transferred.status, 200, JSON.stringify(transferred.body));
  await detailWhen(rig.gw, live.id, 'transfer connected', (d) => d.transfer?.state === 'connected');
  const edgeDone = await Promise.race([rig.edge.run.done, sleep(5_000).then(() => null)]);
  t.equal(edgeDone?.code, 0, 'the edge is released with BYE once the target answered');
  if (edgeDone?.code !== 0) t.comment(gatewayLog(rig.gw, live.id));

  await rig.gw.api('POST', `/v1/calls/${live.id}/hangup`, undefined, key);
  await sippPassed(t, carrier, 'the carrier (BYE from the gateway)');
  await sippPassed(t, rig.target!, 'the transfer target (BYE from the gateway)');
});

t.test('media_bridge from a real carrier: the pcap speech reaches an ElevenLabs agent as pcm_16000, the agent is heard, the carrier hangs up', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const did = '+15550121';
  const { gw, fake } = await startMediaBridgeRig(t, did);

  const carrier = await startCarrier(t, gw, did, 'inbound-uac-talk-bye.xml', ['-d', '2500']);
  await fake.core.until(() => fake.receivedAudio().length >= 64000); // 2 s at 16 kHz
  const heard = fake.receivedAudio();
  t.ok(pcmRms(heard) > 500, `the carrier's PCMA speech reaches the agent as 16-bit PCM (loudest 100 ms: RMS ${pcmRms(heard).toFixed(0)})`);
  fake.sendAudio(pcm16Tone(440, 1000, 16000));
  const live = await inboundCall(gw, did);
  t.equal(live.direction, 'inbound');
  await sippPassed(t, carrier, 'the carrier (BYE answered 200)');
  const done = await ended(gw, live.id);
  t.match(done.cdr, { end_reason: 'completed', hangup_by: 'caller' });
  t.equal((await gw.gateway.store.calls.get(gw.tenantId, live.id))?.conversation_id, fake.conversationId, 'the conversation id is stored');
  await detailWhen(gw, live.id, 'recording', (d) => d.recording.available);
  const response = await fetch(`${gw.base}/v1/calls/${live.id}/recording`, { headers: { authorization: `Bearer ${gw.liveKey}` } });
  const [caller, agent] = channelRms(Buffer.from(await response.arrayBuffer()));
  t.ok(caller > 100 && agent > 100, `the recording holds the caller (RMS ${caller.toFixed(0)}) and the agent's tone as played (RMS ${agent.toFixed(0)})`);
});
