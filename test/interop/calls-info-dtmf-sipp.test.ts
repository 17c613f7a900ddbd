/**
 * DTMF without RFC 4733, against sipp as the carrier: keys signalled by SIP INFO, to a WebSocket
 * agent (docs/API.md "Agent WebSocket protocol": the agent receives the caller's digits as `dtmf`) and across a
 * sip_trunk bridge to an agent edge; and keys sent as tones in the audio by a carrier that
 * negotiated no telephone-event.
 */
import t, { type Test } from 'tap';
import { linearToUlaw, parseTelephoneEvent } from '../../src/engine/media/index.js';
import { waitFor } from '../support/gateway-harness.js';
import { needPeer } from '../support/peers.js';
import { callState, gatewayRtpPort, placeCall, rig, RtpTap } from '../support/calls-sipp-rig.js';
import { freePort } from '../support/sip-sipp.js';
import { ended, inboundCall, sippPassed, startInboundRig } from '../support/inbound-sipp-rig.js';

t.test('docs/API.md "Agent WebSocket protocol": digits the far end sends by SIP INFO (application/dtmf-relay and application/dtmf) reach the agent as dtmf events', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const r = await rig(t, 'calls-uas-info-dtmf.xml');
  const placed = await placeCall(r);
  t.equal(placed.status, 200, JSON.stringify(placed.body));
  await r.bot.core.until(() => r.bot.events().includes('start'));
  const ended = await callState(r.gw, placed.body.id, 'ended');
  t.match(ended.cdr, { end_reason: 'completed', hangup_by: 'callee' }, 'the far end hung up after its digits');
  const done = await r.sipp.done;
  t.equal(done.code, 0, `sipp got 200 for both INFOs and its BYE (${done.stderr.slice(0, 200)})`);
  const digits = r.bot.core.jsonMessages().filter((m) => m.event === 'dtmf').map((m) => (m.dtmf as { digit?: string } | undefined)?.digit);
  t.same(digits, ['5', '#'], 'the agent got "5" (Signal=5) and then "#" (application/dtmf), once each, in order');
});

/**
 * A sip_trunk call from a carrier that sends the key "5" by INFO (`inbound-uac-info.xml`) to an
 * edge running `edgeScenario`; both sipps must pass (`edgeDoes` says what the edge checked) and
 * the call end as the caller's hang-up.
 */
async function infoKeyThroughTrunk(t: Test, edgeScenario: string, edgeDoes: string, edgeArgs: string[] = []): Promise<void> {
  const rig = await startInboundRig(t, { edgeScenario, edgeArgs });
  const carrier = await rig.call('inbound-uac-info.xml');
  const live = await inboundCall(rig.gw, rig.did);
  await sippPassed(t, carrier, 'the carrier (its INFO answered 200, then its BYE)');
  await sippPassed(t, rig.edge, `the edge (${edgeDoes})`);
  const done = await ended(rig.gw, live.id);
  t.match(done.cdr, { end_reason: 'completed', hangup_by: 'caller' });
}

t.test('docs/API.md "Calls": on a sip_trunk call, a key the carrier sends by INFO reaches an edge without telephone-event as an INFO', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  await infoKeyThroughTrunk(t, 'inbound-edge-auth-info.xml', 'an INFO with Signal=5, then the BYE');
});

t.test('RFC 4733 2.5: on a sip_trunk call, a key the carrier sends by INFO reaches an edge with telephone-event as events on the RTP', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  // The tap only records here: nothing listens on its echo port, so the edge says nothing back.
  const tap = await RtpTap.open(t, await freePort());
  await infoKeyThroughTrunk(t, 'inbound-edge-auth-events.xml', 'no INFO: an unexpected request would have failed it; then the BYE', ['-key', 'probe_port', String(tap.port)]);
  const packets = [...tap.legs.values()].flatMap((leg) => leg.otherToFar);
  const events = packets.filter((p) => (p[1]! & 0x7f) === 101).map((p) => ({ timestamp: p.readUInt32BE(4), marker: (p[1]! & 0x80) !== 0, event: parseTelephoneEvent(p, 12) }));
  t.ok(events.length >= 4, `telephone-event packets reached the edge (${events.length})`);
  t.ok(events.every((e) => e.event?.event === 5), 'all of them for the key 5');
  t.ok(events.every((e) => e.timestamp === events[0]!.timestamp), 'one event: every packet carries its start timestamp (2.5.1.2)');
  t.equal(events[0]!.marker, true, 'the first packet has the marker bit (2.5.1.3)');
  const ends = events.filter((e) => e.event?.end);
  t.equal(ends.length, 3, 'the end packet is sent three times (2.5.1.4)');
  t.ok(events.slice(0, events.length - 3).every((e) => !e.event?.end), 'and only at the end');
  const durations = events.map((e) => e.event?.duration ?? 0);
  t.ok(durations.every((d, i) => i === 0 || d >= durations[i - 1]!), `durations grow, ${durations.join(', ')}`);
});

/** µ-law of a DTMF key (ITU-T Q.23: one row and one column tone, each at 8000 of 32767) for `ms`. */
function dtmfTones(key: string, ms: number): Buffer {
  const [low, high] = ({ '5': [770, 1336], '#': [941, 1477] } as Record<string, [number, number]>)[key]!;
  const samples = (8000 * ms) / 1000;
  return Buffer.from(Array.from({ length: samples }, (_, i) => linearToUlaw(Math.round(8000 * (Math.sin((2 * Math.PI * low * i) / 8000) + Math.sin((2 * Math.PI * high * i) / 8000))))));
}

t.test('docs/API.md "Agent WebSocket protocol", ITU-T Q.24: keys a carrier without telephone-event sends as tones in the audio reach the agent as dtmf, once each', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  // The carrier `far` takes PCMU only, so the call negotiates no telephone-event.
  const r = await rig(t, 'calls-uas-tap.xml', { tap: true });
  const placed = await placeCall(r);
  t.equal(placed.status, 200, JSON.stringify(placed.body));
  await callState(r.gw, placed.body.id, 'active');
  await r.bot.core.until(() => r.bot.events().includes('start'));
  const gwPort = await gatewayRtpPort(r, placed.body.id);
  await waitFor('the gateway sends to the far end', () => r.tap!.legs.has(gwPort));
  const silence = Buffer.alloc(800, 0xff); // 100 ms of µ-law silence
  await r.tap!.inject(gwPort, Buffer.concat([silence, dtmfTones('5', 120), silence, dtmfTones('#', 120), silence]));
  await r.bot.core.until(() => r.bot.events().filter((e) => e === 'dtmf').length >= 2);
  const digits = r.bot.core.jsonMessages().filter((m) => m.event === 'dtmf').map((m) => (m.dtmf as { digit?: string } | undefined)?.digit);
  t.same(digits, ['5', '#'], 'the agent got "5" then "#"');
  const hung = await r.gw.api('POST', `/v1/calls/${placed.body.id}/hangup`, undefined, { key: r.gw.liveKey });
  t.equal(hung.status, 200, JSON.stringify(hung.body));
});
