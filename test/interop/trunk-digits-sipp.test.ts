/**
 * Digits toward the caller of a sip_trunk call (docs/API.md "Digits toward the callee"), against
 * sipp as both ends: a carrier calling a DID whose agent is a sipp SIP edge. The edge presses "1"
 * as RFC 4733 events (the Debian dtmf_2833_1.pcap) and "7" by SIP INFO; the API then asks for
 * "9". The carrier gets all three as it takes digits: RFC 4733 events when it negotiated
 * telephone-event (RFC 4733 §2.5), in-band tones when it did not (ITU-T Q.23, checked with the
 * gateway's own Goertzel detector), SIP INFO when it is configured with `dtmf: info`.
 */
import t, { type Test } from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { GoertzelDtmfDetector, parseTelephoneEvent, ulawDecode, dtmfDigit } from '../../src/engine/media/index.js';
import { waitFor } from '../support/gateway-harness.js';
import { needPeer, tempWorkdir } from '../support/peers.js';
import { RtpTap } from '../support/calls-sipp-rig.js';
import { freePort, SCENARIOS } from '../support/sip-sipp.js';
import { ended, inboundCall, sippMessages, sippPassed, startInboundRig, type InboundRig, type SippPeer } from '../support/inbound-sipp-rig.js';

/** The carrier's scenario, with telephone-event taken out of its offer when `events` is false. */
function carrierScenario(t: Test, events: boolean): string {
  const xml = readFileSync(join(SCENARIOS, 'inbound-uac-keys.xml'), 'utf8');
  if (events) return 'inbound-uac-keys.xml';
  const file = join(tempWorkdir(t), 'carrier-no-events.xml');
  writeFileSync(file, xml.replace(' RTP/AVP 0 101', ' RTP/AVP 0').replace(/\n\s*a=rtpmap:101 telephone-event\/8000\n\s*a=fmtp:101 0-16/, ''));
  // The rig takes scenarios by their path under test/interop/scenarios.
  return relative(SCENARIOS, file);
}

/** The RFC 4733 events the carrier received: runs of packets of one key up to its end packets, with the start timestamps they carried. */
function eventKeys(tap: RtpTap): { key: string; starts: Set<number> }[] {
  const packets = [...tap.legs.values()].flatMap((leg) => leg.otherToFar).filter((p) => (p[1]! & 0x7f) === 101);
  const keys: { key: string; code: number; ended: boolean; starts: Set<number> }[] = [];
  for (const p of packets) {
    const event = parseTelephoneEvent(p, 12);
    if (event === null) continue;
    let last = keys.at(-1);
    if (!last || last.code !== event.event || (last.ended && !event.end)) {
      last = { key: dtmfDigit(event.event) ?? '?', code: event.event, ended: false, starts: new Set() };
      keys.push(last);
    }
    last.ended ||= event.end;
    last.starts.add(p.readUInt32BE(4));
  }
  return keys;
}

/** The keys heard as tones in the audio the carrier received, by the gateway's own detector. */
function toneKeys(tap: RtpTap): string[] {
  const detector = new GoertzelDtmfDetector();
  const pcm = new Int16Array(1500);
  const keys: string[] = [];
  for (const leg of tap.legs.values()) {
    for (const payload of leg.toFar) {
      const key = detector.process(pcm.subarray(0, ulawDecode(payload, pcm)));
      if (key !== null) keys.push(key);
    }
  }
  return keys;
}

async function keysCall(t: Test, o: { events: boolean; info?: boolean }): Promise<{ rig: InboundRig; id: string; tap: RtpTap; carrier: SippPeer }> {
  const rig = await startInboundRig(t, { edgeScenario: 'inbound-edge-keys.xml', ...(o.info ? { carrierDtmf: 'info' as const } : {}) });
  // Nothing listens on the tap's echo port: the carrier only records what the gateway sends it.
  const tap = await RtpTap.open(t, await freePort());
  const scenario = o.info ? 'inbound-uac-keys-info.xml' : carrierScenario(t, o.events);
  const carrier = await rig.call(scenario, ['-key', 'probe_port', String(tap.port)]);
  const live = await inboundCall(rig.gw, rig.did);
  if (!o.info) {
    // The caller talks (quietly) all along, as callers do: what the edge echoes keeps the stream
    // toward the carrier moving, so each key is a new event on a running clock (RFC 4733 §2.5.1.2).
    await waitFor('the gateway sends to the carrier', () => tap.legs.size > 0);
    const talking = tap.inject([...tap.legs.keys()][0]!, Buffer.alloc(8000 * 7, 0xfe));
    t.teardown(() => talking.catch(() => undefined));
  }
  return { rig, id: live.id, tap, carrier };
}

async function sendNine(t: Test, rig: InboundRig, id: string): Promise<void> {
  const sent = await rig.gw.api('POST', `/v1/calls/${id}/dtmf`, { digits: '9' }, { key: rig.gw.liveKey });
  t.equal(sent.status, 200, `the API takes digits on a sip_trunk call: ${JSON.stringify(sent.body)}`);
}

t.test('RFC 4733 §2.5: a carrier with telephone-event gets the sip_trunk edge\'s RFC 4733 and INFO keys and the API\'s as events', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const { rig, id, tap } = await keysCall(t, { events: true });
  await waitFor('the edge\'s two keys at the carrier', () => eventKeys(tap).some((e) => e.key === '7'), 15_000);
  await sendNine(t, rig, id);
  await waitFor('the API\'s key at the carrier', () => eventKeys(tap).some((e) => e.key === '9'), 10_000);
  const events = eventKeys(tap);
  t.same(events.map((e) => e.key), ['1', '7', '9'], '"1" relayed, "7" from the edge\'s INFO, "9" from the API, in order');
  t.same(events.slice(1).map((e) => e.starts.size), [1, 1], 'the keys made here are one event each: every packet carries its start timestamp (§2.5.1.2)');
  t.not([...events[1]!.starts][0], [...events[2]!.starts][0], 'and two events, two start timestamps');
  await sippPassed(t, rig.edge, 'the edge (its INFO answered 200, then the BYE)');
  t.match((await ended(rig.gw, id)).cdr, { end_reason: 'completed', hangup_by: 'caller' });
});

t.test('ITU-T Q.23: a carrier without telephone-event hears the sip_trunk edge\'s RFC 4733 and INFO keys and the API\'s as tones', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const { rig, id, tap } = await keysCall(t, { events: false });
  await waitFor('the edge\'s two keys heard at the carrier', () => toneKeys(tap).length >= 2, 15_000);
  await sendNine(t, rig, id);
  await waitFor('the API\'s key heard at the carrier', () => toneKeys(tap).length >= 3, 10_000);
  t.same(toneKeys(tap), ['1', '7', '9'], 'each key heard once, in order');
  t.same(eventKeys(tap), [], 'and no telephone-event was sent where none was negotiated');
  await sippPassed(t, rig.edge, 'the edge (its INFO answered 200, then the BYE)');
  t.match((await ended(rig.gw, id)).cdr, { end_reason: 'completed', hangup_by: 'caller' });
});

t.test('docs/CONFIGURATION.md "Digits toward the callee": a carrier with dtmf: info gets the sip_trunk edge\'s keys and the API\'s as SIP INFO', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const { rig, id, carrier } = await keysCall(t, { events: false, info: true });
  await waitFor('the edge\'s two keys at the carrier', () => (sippMessages(carrier).match(/Signal=[17]/g) ?? []).length >= 2, 15_000);
  await sendNine(t, rig, id);
  await sippPassed(t, carrier, 'the carrier (INFOs with Signal=1, 7 and 9, in order, then its BYE)');
  await sippPassed(t, rig.edge, 'the edge (its INFO answered 200, then the BYE)');
  t.match((await ended(rig.gw, id)).cdr, { end_reason: 'completed', hangup_by: 'caller' });
});
