/**
 * Inbound calls and requests without offers, against sipp as the carrier. A late offer: the
 * INVITE has no body, so the gateway's 200 carries the offer and the carrier's ACK the answer
 * (RFC 3261 13.2.1, RFC 3264 section 4), as carrier trunks configured for delayed offer send
 * them; the carrier's sipp takes the RTP address from the 200 and plays the Debian g711a.pcap
 * (PCMA) there. And the refreshes of an answered call without offers: UPDATE (RFC 3311) and
 * re-INVITE (RFC 3261 14.2) with no body.
 */
import t from 'tap';
import type { ApiBody } from '../support/gateway-harness.js';
import { pcm16Tone } from '../support/inbound-pcm-audio.js';
import {
  channelRms, detailWhen, ended, inboundCall, pcmRms, requestsIn, responsesIn, sippMessages, sippPassed, startCarrier, startInboundRig, startMediaBridgeRig,
} from '../support/inbound-sipp-rig.js';
import { needPeer } from '../support/peers.js';

/** The payload types of the first audio m-line of a message, in order. */
function offeredPayloadTypes(message: string): string[] {
  return /^m=audio \d+ RTP\/AVP ([\d ]+)$/m.exec(message)?.[1]?.trim().split(' ') ?? [];
}

t.test('RFC 3261 13.2.1 and RFC 3264 4: a late offer to a media_bridge agent: offer in the 200, answer in the ACK, speech both ways', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const did = '+15550123';
  const { gw, fake } = await startMediaBridgeRig(t, did);

  // The call lasts long enough for 2 s of speech to reach the agent even when joining it is slow.
  const carrier = await startCarrier(t, gw, did, 'inbound-uac-late-offer.xml', ['-d', '6000']);
  // The carrier plays its pcap to the address in our offer, so speech at the agent proves the offer was usable.
  await fake.core.until(() => fake.receivedAudio().length >= 64000);
  t.ok(pcmRms(fake.receivedAudio()) > 500, `the carrier's PCMA speech reaches the agent (loudest 100 ms: RMS ${pcmRms(fake.receivedAudio()).toFixed(0)})`);
  fake.sendAudio(pcm16Tone(440, 1000, 16000));
  const live = await inboundCall(gw, did);
  const callerCodec = (d: ApiBody): unknown => (d.session?.remote as { codec?: string } | undefined)?.codec;
  const talking = await detailWhen(gw, live.id, 'caller leg up', (d) => callerCodec(d) !== undefined);
  t.equal(callerCodec(talking), 'PCMA', "the caller leg runs the codec of the ACK's answer");
  await sippPassed(t, carrier, 'the carrier (200 with an offer, ACK with the answer, BYE answered)');

  const ok = responsesIn(sippMessages(carrier), 200)[0] ?? '';
  t.match(ok, /^Content-Type:\s*application\/sdp/im, 'the 200 carries SDP: the offer');
  t.same(offeredPayloadTypes(ok), ['0', '8', '101'], "the offer lists the carrier's codecs and telephone-event");
  const done = await ended(gw, live.id);
  t.match(done.cdr, { end_reason: 'completed', hangup_by: 'caller' });
  t.ok(done.answered_at, 'answered once the ACK brought the answer');
  await detailWhen(gw, done.id, 'recording', (d) => d.recording.available);
  const response = await fetch(`${gw.base}/v1/calls/${live.id}/recording`, { headers: { authorization: `Bearer ${gw.liveKey}` } });
  const [caller, agent] = channelRms(Buffer.from(await response.arrayBuffer()));
  t.ok(caller > 100 && agent > 100, `the recording holds the caller (RMS ${caller.toFixed(0)}) and the agent (RMS ${agent.toFixed(0)})`);
});

t.test('RFC 3261 13.2.1 and RFC 3264 4: a late offer to a sip_trunk agent: the edge answers first, the caller is offered its codec, audio flows both ways', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  // The carrier prefers PCMA; the edge answers PCMU, so the caller's offer must put PCMU first.
  const rig = await startInboundRig(t, { edgeScenario: 'inbound-edge-auth.xml', carrierCodecs: ['PCMA', 'PCMU', 'telephone-event'] });
  const carrier = await rig.call('inbound-uac-late-offer.xml', ['-d', '3000']);
  const live = await inboundCall(rig.gw, rig.did);
  const talking = await detailWhen(rig.gw, live.id, 'packets on both legs', (d) => {
    const s = (d.session ?? {}) as { remote?: { packets_received?: number; packets_sent?: number }; agent?: { rtp?: { packets_received?: number } | null } };
    return (s.remote?.packets_received ?? 0) >= 40 && (s.agent?.rtp?.packets_received ?? 0) >= 40 && (s.remote?.packets_sent ?? 0) >= 40;
  });
  t.ok(talking.answered_at, 'the caller is answered once the edge answered and the ACK brought the answer');
  await sippPassed(t, carrier, 'the carrier (late offer answered in the ACK, BYE answered)');
  await sippPassed(t, rig.edge, 'the edge (challenge met, BYE received)');

  const ok = responsesIn(sippMessages(carrier), 200)[0] ?? '';
  t.same(offeredPayloadTypes(ok), ['0', '8', '101'], "the caller's offer starts with the edge's codec (PCMU), so the bridge can relay without transcoding");
  t.equal(requestsIn(sippMessages(carrier), 'ACK').length > 0, true);
  const done = await ended(rig.gw, live.id);
  t.match(done.cdr, { end_reason: 'completed', hangup_by: 'caller' });
});

t.test('RFC 3264 4: an ACK without the answer to our offer gets a BYE; the call ends failed, never answered', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const rig = await startInboundRig(t, { edgeScenario: 'inbound-edge-auth.xml' });
  const carrier = await rig.call('inbound-uac-late-offer-no-answer.xml');
  await sippPassed(t, carrier, 'the carrier (its BYE from the gateway answered 200)');
  await sippPassed(t, rig.edge, 'the edge (released with BYE)');
  const live = await inboundCall(rig.gw, rig.did);
  const done = await ended(rig.gw, live.id);
  t.match(done.cdr, { end_reason: 'failed', hangup_by: 'gateway' });
  t.equal(done.answered_at, null, 'no media could flow, so the call never counts as answered');
});

t.test('RFC 3311 5.2, RFC 4028 and RFC 3261 14.2: an UPDATE without a body gets a 200 without SDP; a re-INVITE without a body gets our offer, answered in the ACK', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const rig = await startInboundRig(t, { edgeScenario: 'inbound-edge-auth.xml' });
  const carrier = await rig.call('inbound-uac-refresh-no-offer.xml');
  const live = await inboundCall(rig.gw, rig.did);
  const received = (d: ApiBody): number => (d.session?.remote as { packets_received?: number } | undefined)?.packets_received ?? 0;
  const reoffers = (d: ApiBody): number => (d.session?.remote as { reoffers?: number } | undefined)?.reoffers ?? 0;
  // The ACK's answer counts as a re-offer handled; the caller's audio must go on arriving after it.
  const refreshed = await detailWhen(rig.gw, live.id, 'the re-INVITE answered in the ACK', (d) => reoffers(d) >= 1);
  await detailWhen(rig.gw, live.id, 'caller audio after the re-INVITE', (d) => received(d) >= received(refreshed) + 25);
  await sippPassed(t, carrier, 'the carrier (UPDATE 200, re-INVITE 200 with an offer, ACK, BYE)');
  await sippPassed(t, rig.edge, 'the edge (BYE received)');

  const log = sippMessages(carrier);
  const updateOk = responsesIn(log, 200, 'UPDATE')[0] ?? '';
  t.match(updateOk, /^Content-Length:\s*0$/m, 'the 200 to the UPDATE carries no SDP');
  t.match(updateOk, /^Session-Expires:\s*90;refresher=uac$/m, 'and confirms the session refresh (RFC 4028)');
  const reinviteOk = responsesIn(log, 200, 'INVITE').find((m) => /^CSeq:\s*3 INVITE$/m.test(m)) ?? '';
  t.same(offeredPayloadTypes(reinviteOk), ['8', '101'], 'the 200 to the re-INVITE offers the codec in use (PCMA) and telephone-event');
  const done = await ended(rig.gw, live.id);
  t.match(done.cdr, { end_reason: 'completed', hangup_by: 'caller' }, 'the call went on until the caller hung up');
});
