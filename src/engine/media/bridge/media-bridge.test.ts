import t from 'tap';
import { FakeClock } from '../../../common/clock.js';
import { InvariantError } from '../../../common/errors.js';
import { RtpPeer, settle, testPortPool } from '../../../../test/support/rtp-peer.js';
import { alawEncode, ulawDecode, ulawEncode } from '../codecs/g711.js';
import { parseTelephoneEvent, TelephoneEventReceiver, writeTelephoneEvent } from '../dtmf/rfc4733.js';
import type { AudioFrame } from '../pipeline/audio-frame.js';
import { parseRtpHeader, rtpSsrc, serializeRtp, type RtpHeader } from '../rtp/packet.js';
import { isPortsExhausted, type PortPool } from '../rtp/port-pool.js';
import { RtpSession, type RtpSessionOwner } from '../rtp/rtp-session.js';
import { LoopingPcmSource } from './audio-source.js';
import { ALAW_TO_ULAW, type BridgeLegConfig, type LegEncoding } from './bridge-leg.js';
import { MAX_PAYLOAD, MediaBridge, type MediaBridgeDelegate } from './media-bridge.js';

type T = { teardown(fn: () => void): void };
const header = (buf: Buffer): RtpHeader => parseRtpHeader(buf) as RtpHeader;

function sine(freqs: number[], n: number, amp = 5000, phase = 0): Int16Array {
  return Int16Array.from({ length: n }, (_, i) => Math.round(freqs.reduce((s, f) => s + amp * Math.sin((2 * Math.PI * f * (i + phase)) / 8000), 0)));
}

interface Rig {
  clock: FakeClock;
  bridge: MediaBridge;
  caller: RtpPeer;
  agent: RtpPeer;
  a: RtpSession;
  b: RtpSession;
  ports: PortPool;
}

async function session(t: T, clock: FakeClock, ports: PortPool, peer: RtpPeer): Promise<RtpSession> {
  const s = await RtpSession.open({ clock, ports, bindAddress: '127.0.0.1', rtcpIntervalMs: 0 });
  if (isPortsExhausted(s)) throw new Error('no ports');
  t.teardown(() => s.close());
  s.setRemote({ address: '127.0.0.1', port: peer.port });
  return s;
}

const leg = (s: RtpSession, encoding: LegEncoding, pt: number, eventPt: number | null, extra: Partial<BridgeLegConfig> = {}): BridgeLegConfig => ({
  session: s, encoding, sendPayloadType: pt, receivePayloadType: pt, sendEventPayloadType: eventPt, receiveEventPayloadType: eventPt, ...extra,
});

async function rig(t: T, encA: LegEncoding = 'PCMU', encB: LegEncoding = 'PCMU', delegate: MediaBridgeDelegate = {}, extraA: Partial<BridgeLegConfig> = {}): Promise<Rig> {
  const clock = new FakeClock();
  const ports = testPortPool();
  const caller = await RtpPeer.open(t);
  const agent = await RtpPeer.open(t);
  const a = await session(t, clock, ports, caller);
  const b = await session(t, clock, ports, agent);
  const ptOf = (e: LegEncoding): number => (e === 'PCMA' ? 8 : e === 'G722' ? 9 : 0);
  const bridge = new MediaBridge({ clock, a: leg(a, encA, ptOf(encA), 101, extraA), b: leg(b, encB, ptOf(encB), 96), delegate });
  t.teardown(() => bridge.close());
  return { clock, bridge, caller, agent, a, b, ports };
}

const ulawFrame = (i: number): Buffer => {
  const out = Buffer.alloc(160);
  ulawEncode(sine([440], 160, 5000, i * 160), out);
  return out;
};
const rtp = (seq: number, pt = 0, ssrc = 0x1111, payload: Buffer = ulawFrame(seq)) =>
  [{ payloadType: pt, sequenceNumber: seq, timestamp: seq * 160, ssrc }, payload] as const;

t.test('passthrough: same codec relays payloads untouched with the leg\'s own SSRC and sequence', async (t) => {
  const { caller, agent, a, b } = await rig(t);
  for (let i = 0; i < 5; i++) await caller.sendRtp(a.localPort, ...rtp(100 + i));
  for (let i = 0; i < 3; i++) await agent.sendRtp(b.localPort, ...rtp(7 + i, 0, 0x2222));
  await agent.waitFor(5);
  await caller.waitFor(3);
  const got = agent.received.map((d) => header(d.data));
  t.ok(got.every((h) => h.ssrc === b.sequencer.ssrc && h.payloadType === 0));
  t.ok(got.every((h, i) => i === 0 || ((h.sequenceNumber - got[i - 1]!.sequenceNumber) & 0xffff) === 1));
  t.same(agent.received[2]!.data.subarray(12), ulawFrame(102), 'payload bytes unchanged');
  t.ok(caller.received.every((d) => rtpSsrc(d.data) === a.sequencer.ssrc), 'and back the other way');
});

t.test('passthrough rewrites the received buffer in place instead of copying it', async (t) => {
  const clock = new FakeClock();
  const ports = testPortPool();
  const a = await session(t, clock, ports, await RtpPeer.open(t));
  const b = await session(t, clock, ports, await RtpPeer.open(t));
  // What the bridge hears from leg a, taken the way the session hands it over (docs/ARCHITECTURE.md "Media ownership").
  let owner: RtpSessionOwner = {};
  const take = a.take.bind(a);
  a.take = (o) => take(owner = o);
  const bridge = new MediaBridge({ clock, a: leg(a, 'PCMU', 0, 101), b: leg(b, 'PCMU', 0, 96) });
  t.teardown(() => bridge.close());
  const packet = serializeRtp(...rtp(1));
  owner.onRtp!(packet, a);
  t.equal(rtpSsrc(packet), b.sequencer.ssrc, 'the same buffer now carries leg b\'s SSRC');
});

t.test('transcoding: PCMA from the caller reaches a PCMU agent as the same audio, and back', async (t) => {
  const { caller, agent, a, b } = await rig(t, 'PCMA', 'PCMU');
  const alaw = Buffer.alloc(160);
  alawEncode(sine([1000], 160), alaw);
  await caller.sendRtp(a.localPort, ...rtp(1, 8, 0x1111, alaw));
  await agent.waitFor(1);
  const out = agent.received[0]!.data;
  t.equal(header(out).payloadType, 0);
  t.same([...out.subarray(12)], [...alaw].map((c) => ALAW_TO_ULAW[c]!));
  const pcm = new Int16Array(160);
  ulawDecode(out.subarray(12), pcm);
  const ref = sine([1000], 160);
  const err = pcm.reduce((s, v, i) => s + (v - ref[i]!) ** 2, 0);
  const sig = ref.reduce((s, v) => s + v * v, 0);
  t.ok(10 * Math.log10(sig / err) > 30, 'G.711 quality survives the double conversion');
  await agent.sendRtp(b.localPort, ...rtp(1, 0, 0x2222));
  await caller.waitFor(1);
  t.equal(header(caller.received[0]!.data).payloadType, 8);
});

t.test('mute is per direction; unknown payload types are dropped and counted', async (t) => {
  const { bridge, caller, agent, a, b } = await rig(t);
  bridge.setMute('a', true);
  await caller.sendRtp(a.localPort, ...rtp(1));
  await agent.sendRtp(b.localPort, ...rtp(1, 0, 0x2222));
  await caller.sendRtp(a.localPort, ...rtp(2, 18));
  await caller.waitFor(1);
  await settle();
  t.equal(agent.received.length, 0, 'caller muted towards the agent');
  t.equal(caller.received.length, 1, 'agent still heard');
  t.equal(bridge.stats().a.packetsDropped, 1);
  bridge.setMute('a', false);
  await caller.sendRtp(a.localPort, ...rtp(3));
  await agent.waitFor(1);
});

t.test('RFC 3550 5.1: a payload beyond an Ethernet MTU or a header that overruns the packet is dropped and counted, not relayed', async (t) => {
  const { bridge, caller, agent, a } = await rig(t);
  const tapped: number[] = [];
  bridge.setTap('a', 'received', (frame) => tapped.push(frame.pcm.length));
  await caller.sendRtp(a.localPort, ...rtp(1, 0, 0x1111, Buffer.alloc(MAX_PAYLOAD + 1, 0xff)));
  const overrun = serializeRtp(...rtp(2));
  overrun[0] = 0x80 | 15;
  await caller.sendRaw(a.localPort, overrun.subarray(0, 40));
  await caller.sendRtp(a.localPort, ...rtp(3, 0, 0x1111, Buffer.alloc(MAX_PAYLOAD, 0xff)));
  await agent.waitFor(1);
  await settle();
  t.equal(agent.received.length, 1, 'only the packet within the MTU');
  t.equal(agent.received[0]!.data.length - 12, MAX_PAYLOAD);
  t.equal(bridge.stats().a.packetsDropped, 2);
  t.same(tapped, [MAX_PAYLOAD], 'the tap saw the relayed packet only');
});

t.test('RFC 3264 8.4 hold: both directions stop; music reaches the caller and silence the agent, paced at 20 ms, continuing the streams', async (t) => {
  const { bridge, clock, caller, agent, a, b } = await rig(t);
  await agent.sendRtp(b.localPort, ...rtp(50, 0, 0x2222));
  await caller.waitFor(1);
  t.equal(bridge.hold({ music: new LoopingPcmSource(sine([400], 800), 'tone') }), true);
  await caller.sendRtp(a.localPort, ...rtp(1));
  await agent.sendRtp(b.localPort, ...rtp(51, 0, 0x2222));
  clock.advance(100);
  await caller.waitFor(1 + 6);
  await agent.waitFor(6);
  await settle();
  // docs/DECISIONS.md "Hold and media direction": RTP keeps flowing to the agent's edge too.
  t.equal(agent.received.length, 6, 'the agent gets frames 0-5 in 100 ms');
  t.ok(agent.received.every((d) => d.data.subarray(12).every((byte) => byte === 0xff)), 'of µ-law silence: the caller is not heard during hold');
  t.equal(caller.received.length, 7, 'frames 0-5 of music in 100 ms; the agent packet was held back');
  const hs = caller.received.map((d) => header(d.data));
  t.ok(hs.every((h) => h.ssrc === a.sequencer.ssrc), 'one SSRC across relay and music');
  t.ok(hs.every((h, i) => i === 0 || ((h.sequenceNumber - hs[i - 1]!.sequenceNumber) & 0xffff) === 1), 'consecutive sequence numbers');
  t.equal(hs[1]!.marker, true, 'music starts a talkspurt');
  t.equal((hs[2]!.timestamp - hs[1]!.timestamp) >>> 0, 160);
  bridge.resume();
  clock.advance(100);
  await agent.sendRtp(b.localPort, ...rtp(52, 0, 0x2222));
  await caller.waitFor(8);
  await settle();
  t.equal(caller.received.length, 8, 'music stopped, relay resumed');
  t.equal(agent.received.length, 6, 'silence to the agent stopped');
  t.equal(bridge.isHeld, false);
});

t.test('RFC 4733: received events are reported once and relayed with the other leg\'s payload type', async (t) => {
  const digits: string[] = [];
  const { caller, agent, a } = await rig(t, 'PCMU', 'PCMU', { onDtmf: (legName, d, via) => digits.push(`${legName}:${d}:${via}`) });
  const ev = (end: boolean, duration: number): Buffer => {
    const p = Buffer.alloc(4);
    writeTelephoneEvent(p, 0, { event: 5, end, volume: 10, duration });
    return p;
  };
  const packets = [ev(false, 160), ev(false, 320), ev(true, 480), ev(true, 480), ev(true, 480)];
  for (const [i, p] of packets.entries()) await caller.sendRtp(a.localPort, { payloadType: 101, sequenceNumber: 10 + i, timestamp: 8000, ssrc: 0x1111 }, p);
  await agent.waitFor(5);
  t.same(digits, ['a:5:rfc4733']);
  t.ok(agent.received.every((d) => header(d.data).payloadType === 96));
  t.equal(new Set(agent.received.map((d) => header(d.data).timestamp)).size, 1, 'one event timestamp');
});

t.test('RFC 4733 2.5.1: sendDtmf plays start, updates and three end packets per digit', async (t) => {
  const { bridge, clock, caller } = await rig(t);
  t.equal(bridge.sendDtmf('a', '1x2'), 'X', 'unknown characters are returned');
  for (let i = 0; i < 30; i++) {
    clock.advance(20);
    await settle(2);
  }
  await caller.waitFor(14);
  const rx = new TelephoneEventReceiver();
  let digits = '';
  for (const d of caller.received) {
    const h = header(d.data);
    t.equal(h.payloadType, 101);
    for (const done of rx.receive(h.timestamp, parseTelephoneEvent(d.data, 12)!)) digits += '0123456789*#ABCD'[done.event];
  }
  t.equal(digits, '12');
  const hs = caller.received.map((d) => header(d.data));
  t.equal(hs.filter((h) => h.marker).length, 2, 'one marker per event');
  t.equal(hs.filter((h, i) => parseTelephoneEvent(caller.received[i]!.data, 12)!.end).length, 6, 'three ends per event');
});

t.test('in-band DTMF in the caller\'s audio is detected with Goertzel', async (t) => {
  const digits: string[] = [];
  const { caller, agent, a } = await rig(t, 'PCMU', 'PCMU', { onDtmf: (legName, d, via) => digits.push(`${legName}:${d}:${via}`) }, { detectInbandDtmf: true });
  const pcm = sine([852, 1477], 160 * 6, 5000);
  for (let i = 0; i < 6; i++) {
    const payload = Buffer.alloc(160);
    ulawEncode(pcm.subarray(i * 160, (i + 1) * 160), payload);
    await caller.sendRtp(a.localPort, ...rtp(i, 0, 0x1111, payload));
  }
  await agent.waitFor(6);
  t.same(digits, ['a:9:inband']);
});

t.test('taps receive decoded 8 kHz frames with the RTP timestamp, only while attached', async (t) => {
  const { bridge, caller, agent, a } = await rig(t);
  const frames: AudioFrame[] = [];
  const sent: number[] = [];
  bridge.setTap('a', 'received', (f) => frames.push({ ...f, pcm: f.pcm.slice() }));
  bridge.setTap('b', 'sent', (f) => sent.push(f.pcm.length));
  await caller.sendRtp(a.localPort, ...rtp(3));
  await agent.waitFor(1);
  t.equal(frames.length, 1);
  t.equal(frames[0]!.sampleRate, 8000);
  t.equal(frames[0]!.timestamp, 480);
  t.equal(frames[0]!.pcm.length, 160);
  t.same(sent, [160]);
  bridge.setTap('a', 'received', null);
  await caller.sendRtp(a.localPort, ...rtp(4));
  await agent.waitFor(2);
  t.equal(frames.length, 1);
});

t.test('agent swap: the caller sees one continuous stream across the new leg', async (t) => {
  const { bridge, clock, caller, agent, b, ports } = await rig(t);
  await agent.sendRtp(b.localPort, ...rtp(1000, 0, 0x2222));
  await caller.waitFor(1);
  const agent2 = await RtpPeer.open(t);
  const c = await session(t, clock, ports, agent2);
  bridge.replaceLeg('b', leg(c, 'PCMU', 0, 96));
  clock.advance(60);
  await agent2.sendRtp(c.localPort, ...rtp(5, 0, 0x3333));
  await agent.sendRtp(b.localPort, ...rtp(1001, 0, 0x2222));
  await caller.waitFor(2);
  await settle();
  t.equal(caller.received.length, 2, 'the old leg is detached');
  const [h1, h2] = caller.received.map((d) => header(d.data));
  t.equal(h1!.ssrc, h2!.ssrc);
  t.equal((h2!.sequenceNumber - h1!.sequenceNumber) & 0xffff, 1);
  t.equal((h2!.timestamp - h1!.timestamp) >>> 0, 480, '60 ms later in timestamp units');
  t.throws(() => bridge.replaceLeg('b', leg(c, 'G722', 9, null)), 'G.722 cannot be bridged with PCMU');
});

t.test('docs/ARCHITECTURE.md "Media ownership": the bridge owns both sessions\' packets, their media time-out stays with its watcher', async (t) => {
  const timeouts: string[] = [];
  const clock = new FakeClock();
  const ports = testPortPool();
  const peer = await RtpPeer.open(t);
  const mk = async (): Promise<RtpSession> => {
    const s = await RtpSession.open({ clock, ports, bindAddress: '127.0.0.1', rtcpIntervalMs: 0, mediaTimeoutMs: 1000 });
    if (isPortsExhausted(s)) throw new Error('no ports');
    t.teardown(() => s.close());
    s.setRemote({ address: '127.0.0.1', port: peer.port });
    return s;
  };
  const [a, b, owned] = [await mk(), await mk(), await mk()];
  a.watchMedia(() => timeouts.push('a'));
  b.watchMedia(() => timeouts.push('b'));
  const releaseOwned = owned.take({});
  t.throws(() => new MediaBridge({ clock, a: leg(a, 'PCMU', 0, null), b: leg(owned, 'PCMU', 0, null) }), InvariantError, 'a session someone owns cannot be bridged');
  t.notOk(a.isOwned, 'the leg taken before the refusal is given back');
  releaseOwned();
  const bridge = new MediaBridge({ clock, a: leg(a, 'PCMU', 0, null), b: leg(b, 'PCMU', 0, null) });
  t.teardown(() => bridge.close());
  t.ok(a.isOwned && b.isOwned, 'the bridge took both sessions');
  clock.advance(1000);
  t.same(timeouts.sort(), ['a', 'b'], 'each session\'s watcher hears its time-out while the bridge owns the packets');
  bridge.replaceLeg('b', leg(owned, 'PCMU', 0, null));
  t.notOk(b.isOwned, 'a replaced leg\'s session is given back');
  t.equal(bridge.sendDtmf('a', '1'), '1', 'no telephone-event on the leg: nothing sent');
  t.match(bridge.describe(), /PCMU:\d+ <-> PCMU:\d+/);
});
