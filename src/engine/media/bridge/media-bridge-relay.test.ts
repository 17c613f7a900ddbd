/**
 * The media I/O's relay (native/media-io relay rules) under a passthrough bridge: the far ends
 * must see exactly what the JavaScript path would send, and the statistics must count the same.
 */
import t, { type Test } from 'tap';
import { FakeClock } from '../../../common/clock.js';
import { openTestSession, RtpPeer, settle } from '../../../../test/support/rtp-peer.js';
import { ulawEncode } from '../codecs/g711.js';
import { parseRtpHeader, type RtpHeader } from '../rtp/packet.js';
import type { RtpSession } from '../rtp/rtp-session.js';
import { useMediaIo } from '../rtp/media-socket.js';
import { relayedPacketsInProcess } from '../rtp/rtp-relay.js';
import { type BridgeLegConfig } from './bridge-leg.js';
import { MediaBridge } from './media-bridge.js';

type T = { teardown(fn: () => void): void };
const header = (buf: Buffer): RtpHeader => parseRtpHeader(buf) as RtpHeader;

if (useMediaIo('auto') !== 'native') throw new Error('these tests need the media I/O addon (npm run build:native)');

async function session(t: T, clock: FakeClock, peer: RtpPeer, mediaTimeoutMs: number): Promise<RtpSession> {
  const s = await openTestSession(t, { clock, mediaTimeoutMs });
  s.setRemote({ address: '127.0.0.1', port: peer.port });
  return s;
}

const leg = (s: RtpSession, pt: number, eventPt: number | null): BridgeLegConfig => ({
  session: s, encoding: 'PCMU', sendPayloadType: pt, receivePayloadType: pt, sendEventPayloadType: eventPt, receiveEventPayloadType: eventPt,
});

async function rig(t: T, mediaTimeoutMs = 0) {
  const clock = new FakeClock();
  const caller = await RtpPeer.open(t);
  const agent = await RtpPeer.open(t);
  const a = await session(t, clock, caller, mediaTimeoutMs);
  const b = await session(t, clock, agent, mediaTimeoutMs);
  // Dynamic numbers differ per leg, so the relay must rewrite the payload type too.
  const bridge = new MediaBridge({ clock, a: leg(a, 0, 101), b: leg(b, 0, 96) });
  t.teardown(() => bridge.close());
  return { clock, bridge, caller, agent, a, b };
}

const payload = Buffer.alloc(160);
ulawEncode(Int16Array.from({ length: 160 }, (_, i) => Math.round(4000 * Math.sin(i / 3))), payload);

async function stream(from: RtpPeer, port: number, first: number, count: number, ssrc = 0x1111): Promise<void> {
  for (let i = 0; i < count; i++) await from.sendRtp(port, { payloadType: 0, sequenceNumber: (first + i) & 0xffff, timestamp: ((first + i) * 160) >>> 0, ssrc }, payload);
}

/**
 * RFC 3550 5.1 as the far end sees it: one SSRC, sequence numbers stepping by one, timestamps
 * never going back (an RFC 4733 event repeats its start timestamp, so equal ones are allowed).
 */
function continuous(t: Test, got: RtpHeader[], ssrc: number): void {
  t.ok(got.every((h) => h.ssrc === ssrc), 'one SSRC throughout');
  const steps = got.slice(1).map((h, i) => (h.sequenceNumber - got[i]!.sequenceNumber) & 0xffff);
  t.same([...new Set(steps)], [1], 'sequence numbers step by one, no gap and no duplicate');
  t.ok(got.slice(1).every((h, i) => ((h.timestamp - got[i]!.timestamp) >>> 0) < 0x80000000), 'timestamps never go back');
}

/** Sends a stream's first packet, waits until it is through (and the rule armed), then the rest. */
async function armedStream(from: RtpPeer, to: RtpPeer, port: number, first: number, count: number, ssrc = 0x1111): Promise<void> {
  const before = to.received.length;
  await stream(from, port, first, 1, ssrc);
  await to.waitFor(before + 1);
  await stream(from, port, first + 1, count - 1, ssrc);
  await to.waitFor(before + count);
}

t.test('a passthrough stream is relayed by the media I/O after its first packet, exactly as JavaScript would send it', async (t) => {
  const { caller, agent, a, b } = await rig(t);
  const inProcess = relayedPacketsInProcess();
  await stream(caller, a.localPort, 65500, 1);
  await agent.waitFor(1);
  t.equal(a.relayedPackets, 0, 'the first packet goes through JavaScript');
  await stream(caller, a.localPort, 65501, 79); // across the sequence number wrap
  await agent.waitFor(80);
  const got = agent.received.map((d) => header(d.data));
  continuous(t, got, b.sequencer.ssrc);
  t.ok(got[0]!.marker, 'the stream starts with the marker bit (RFC 3551 4.1)');
  t.notOk(got.slice(1).some((h) => h.marker), 'and only there');
  t.ok(got.every((h) => h.payloadType === 0), 'the payload type of the receiving leg');
  t.ok(agent.received.every((d) => d.data.subarray(12).equals(payload)), 'payloads untouched');
  t.ok(a.relaying, 'the rule is in place');
  t.equal(a.relayedPackets, 79, 'every later packet was relayed without JavaScript');
  t.equal(relayedPacketsInProcess() - inProcess, 79, 'and counted in the process total `/metrics` reports (vgw_rtp_relayed_packets_total)');
  const sa = a.stats();
  const sb = b.stats();
  t.equal(sa.packetsReceived, 80, 'received counts every packet, relayed or not');
  t.equal(sa.reception.packetsLost, 0, 'the RTCP reception statistics see no loss (RFC 3550 A.3)');
  t.equal(sa.reception.packetsReceived, sa.reception.packetsExpected);
  t.equal(sb.packetsSent, 80, 'sent counts every packet on the other leg');
  t.equal(sb.octetsSent, 80 * 160);
});

t.test('a new SSRC from the same far end goes through JavaScript, which continues the stream and relays the new one', async (t) => {
  const { caller, agent, a, b } = await rig(t);
  await armedStream(caller, agent, a.localPort, 100, 20, 0x1111);
  await armedStream(caller, agent, a.localPort, 9000, 20, 0x2222);
  const got = agent.received.map((d) => header(d.data));
  continuous(t, got, b.sequencer.ssrc);
  t.ok(got[20]!.marker, 'the switch is marked');
  t.equal(a.relayedPackets, 38, 'all but the first packet of each stream relayed');
});

t.test('DTMF sent to the leg takes its stream back to JavaScript at once: one sequence, no duplicate', async (t) => {
  const { bridge, clock, caller, agent, a, b } = await rig(t);
  await armedStream(caller, agent, a.localPort, 1, 10);
  t.ok(a.relaying);
  t.equal(bridge.sendDtmf('b', '5', 40), '', 'a digit to the agent leg');
  t.notOk(a.relaying, 'DTMF to the leg stops the relay into it');
  clock.advance(200); // the digit's updates and three end packets (RFC 4733 2.5.1.4)
  await settle();
  const digitPackets = agent.received.length - 10;
  t.ok(digitPackets >= 4, `the digit went out (${digitPackets} packets)`);
  await armedStream(caller, agent, a.localPort, 11, 10);
  continuous(t, agent.received.map((d) => header(d.data)), b.sequencer.ssrc);
  t.ok(a.relaying, 'relayed again after the digit');
  t.equal(a.relayedPackets, 18, 'all audio but the first packet before and after the digit');
});

t.test('mute and hold take the stream back to JavaScript at once; it is relayed again after', async (t) => {
  const { bridge, caller, agent, a, b } = await rig(t);
  await stream(caller, a.localPort, 1, 10);
  await agent.waitFor(10);
  bridge.setMute('a', true);
  t.notOk(a.relaying, 'mute stops the relay');
  await stream(caller, a.localPort, 11, 10);
  await settle();
  t.equal(agent.received.length, 10, 'nothing passes while muted');
  bridge.setMute('a', false);
  await stream(caller, a.localPort, 21, 10);
  await agent.waitFor(20);
  t.ok(a.relaying, 'relayed again after unmute');
  bridge.hold();
  t.notOk(a.relaying || b.relaying, 'hold stops both directions');
  await stream(caller, a.localPort, 31, 10);
  await settle();
  // The fake clock stands still, so of the silence every held leg gets only frame 0 went out.
  t.equal(agent.received.length, 21, 'nothing of the caller passes while held: one frame of silence');
  t.ok(agent.received[20]!.data.subarray(12).every((byte) => byte === 0xff), 'the held leg got µ-law silence');
  bridge.resume();
  await stream(caller, a.localPort, 41, 10);
  await agent.waitFor(31);
  t.ok(a.relaying, 'relayed again after resume');
  const all = agent.received.map((d) => header(d.data));
  t.ok(all.slice(1).every((h, i) => ((h.sequenceNumber - all[i]!.sequenceNumber) & 0xffff) >= 1 && ((h.sequenceNumber - all[i]!.sequenceNumber) & 0xffff) < 0x8000), 'sequence numbers only move forward (the muted packets stay a gap, as the source sent them)');
});

t.test('packets from another address or a closed target never use the rule', async (t) => {
  const { caller, agent, a, b } = await rig(t);
  await stream(caller, a.localPort, 1, 10);
  await agent.waitFor(10);
  const stranger = await RtpPeer.open(t, '127.0.0.2');
  const before = a.relayedPackets;
  await stream(stranger, a.localPort, 500, 3, 0x1111); // the latched SSRC, from another host: refused (strict source, RFC 3550 8.2)
  await settle();
  t.equal(a.relayedPackets, before, 'not relayed');
  t.equal(a.stats().packetsRejected, 3, 'refused by the latching rule, as without the relay');
  b.close();
  t.notOk(a.relaying, 'closing the target stops the relay');
  await stream(caller, a.localPort, 11, 5);
  await settle();
  t.equal(agent.received.length, 10, 'nothing is sent on a closed session');
});

t.test('relayed packets keep the media timeout quiet; it fires once the stream stops', async (t) => {
  const { clock, caller, agent, a, b } = await rig(t, 5000);
  const timeouts: string[] = [];
  a.watchMedia(() => timeouts.push('a'));
  b.watchMedia(() => timeouts.push('b'));
  await armedStream(caller, agent, a.localPort, 1, 5);
  for (let second = 0; second < 4; second++) {
    clock.advance(3000);
    const before = a.relayedPackets;
    await armedStream(caller, agent, a.localPort, 10 + second * 5, 5);
    t.ok(a.relayedPackets > before, `second ${3 * (second + 1)}: relayed`);
  }
  t.same(timeouts.filter((leg) => leg === 'a'), [], 'no timeout on the leg whose packets were all relayed');
  clock.advance(6000);
  t.same(timeouts.filter((leg) => leg === 'a'), ['a'], 'silence after the last relayed packet times out, once');
});
