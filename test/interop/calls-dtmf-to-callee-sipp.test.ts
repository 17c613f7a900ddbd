/**
 * Digits toward the callee (docs/API.md "Digits toward the callee"), against sipp as the carrier's
 * far end behind an RTP tap that keeps every packet the far end receives: asked for by the agent
 * on its socket (`dtmf` with `digits`, acknowledged with `dtmf_sent`) and by POST
 * /v1/calls/{id}/dtmf; sent as in-band tones, checked by the gateway's own Q.24 detector on the
 * far end's audio, or as RFC 4733 events when the far end took telephone-event.
 */
import t from 'tap';
import { GoertzelDtmfDetector, parseTelephoneEvent, TelephoneEventReceiver, DTMF_EVENTS, ulawToLinear } from '../../src/engine/media/index.js';
import { waitFor } from '../support/gateway-harness.js';
import { needPeer } from '../support/peers.js';
import { callState, gatewayRtpPort, placeCall, rig, type Rig } from '../support/calls-sipp-rig.js';

/** The keys the far end heard as tones, with the sample each was detected at. */
function tonesHeard(mulaw: Buffer): { key: string; at: number }[] {
  const detector = new GoertzelDtmfDetector();
  const pcm = Int16Array.from(mulaw, (b) => ulawToLinear(b));
  const heard: { key: string; at: number }[] = [];
  for (let i = 0; i < pcm.length; i += 160) {
    const key = detector.process(pcm.subarray(i, i + 160));
    if (key) heard.push({ key, at: i });
  }
  return heard;
}

async function activeCall(t: Parameters<typeof rig>[0], r: Rig): Promise<{ id: string; gwPort: number }> {
  const placed = await placeCall(r);
  t.equal(placed.status, 200, JSON.stringify(placed.body));
  await callState(r.gw, placed.body.id, 'active');
  await r.bot.core.until(() => r.bot.events().includes('start'));
  const gwPort = await gatewayRtpPort(r, placed.body.id);
  await waitFor('the gateway sends to the far end', () => r.tap!.legs.has(gwPort));
  return { id: placed.body.id, gwPort };
}

const acks = (r: Rig) => r.bot.core.jsonMessages().filter((m) => m.event === 'dtmf_sent').map((m) => (m.dtmf_sent as { digits: string }).digits);

t.test('ITU-T Q.23: without telephone-event the digits are tones the far end hears, w pauses 500 ms, the agent is told when they are out', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const r = await rig(t, 'calls-uas-tap.xml', { tap: true });
  const { id, gwPort } = await activeCall(t, r);
  const from = r.tap!.legs.get(gwPort)!.toFar.length;
  r.bot.sendDigits('1w2#');
  await r.bot.core.until(() => acks(r).length === 1, 'the dtmf_sent acknowledgement');
  t.same(acks(r), ['1w2#'], 'the acknowledgement names the digits');
  await new Promise((resolve) => setTimeout(resolve, 300));
  const heard = tonesHeard(r.tap!.heardByFarEnd(gwPort, from));
  t.same(heard.map((h) => h.key), ['1', '2', '#'], 'the far end heard 1, 2, # once each');
  const gapMs = (heard[1]!.at - heard[0]!.at) / 8;
  t.ok(gapMs >= 500 + 100, `the w put at least 500 ms between 1 and 2 beyond the key itself (${gapMs} ms)`);
  t.equal(r.tap!.legs.get(gwPort)!.otherToFar.length, 0, 'no telephone-event was sent to a far end that did not take it');

  const before = r.tap!.legs.get(gwPort)!.toFar.length;
  const api = await r.gw.api('POST', `/v1/calls/${id}/dtmf`, { digits: '9*' }, { key: r.gw.liveKey });
  t.equal(api.status, 200, JSON.stringify(api.body));
  await waitFor('the far end hears 9 and *', () => tonesHeard(r.tap!.heardByFarEnd(gwPort, before)).length >= 2);
  t.same(tonesHeard(r.tap!.heardByFarEnd(gwPort, before)).map((h) => h.key), ['9', '*'], 'POST /v1/calls/{id}/dtmf sends the same way');
  const bad = await r.gw.api('POST', `/v1/calls/${id}/dtmf`, { digits: '12x' }, { key: r.gw.liveKey });
  t.equal(bad.status, 400, 'a character that is no key is refused');
  t.equal(bad.body.code, 'validation_failed');
  await r.gw.api('POST', `/v1/calls/${id}/hangup`, undefined, { key: r.gw.liveKey });
  const ended = await r.gw.api('POST', `/v1/calls/${id}/dtmf`, { digits: '1' }, { key: r.gw.liveKey });
  t.equal(ended.status, 409, 'an ended call takes no digits');
  t.equal(ended.body.code, 'call_not_active');
});

t.test('RFC 4733 2.5: with telephone-event negotiated the digits are events, one per key, each with its start timestamp, marker and three end packets', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const r = await rig(t, 'calls-uas-tap-events.xml', { tap: true, codecs: 'PCMU, telephone-event' });
  const { id, gwPort } = await activeCall(t, r);
  const from = r.tap!.legs.get(gwPort)!.toFar.length;
  r.bot.sendDigits('5#');
  await r.bot.core.until(() => acks(r).length === 1, 'the dtmf_sent acknowledgement');
  const packets = r.tap!.legs.get(gwPort)!.otherToFar.filter((p) => (p[1]! & 0x7f) === 101);
  const receiver = new TelephoneEventReceiver();
  const keys = packets.flatMap((p) => receiver.receive(p.readUInt32BE(4), parseTelephoneEvent(p, 12)!)).map((e) => DTMF_EVENTS[e.event]);
  t.same(keys, ['5', '#'], 'the far end receives 5 then #');
  const starts = new Set(packets.map((p) => p.readUInt32BE(4)));
  t.equal(starts.size, 2, 'two events, each with one timestamp on all its packets (2.5.1.1)');
  t.equal(packets.filter((p) => (p[1]! & 0x80) !== 0).length, 2, 'the marker bit on each event\'s first packet only (2.5.1.3)');
  t.equal(packets.filter((p) => (p[13]! & 0x80) !== 0).length, 6, 'three end packets per event (2.5.1.4)');
  t.same(tonesHeard(r.tap!.heardByFarEnd(gwPort, from)), [], 'and no tones in the audio');
  await r.gw.api('POST', `/v1/calls/${id}/hangup`, undefined, { key: r.gw.liveKey });
});
