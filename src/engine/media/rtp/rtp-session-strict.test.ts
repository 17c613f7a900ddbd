/**
 * Strict media sources (docs/SECURITY.md "Media sources", `rtp.strict_source`): the RTP bleed of
 * CVE-2017-14099's class, NAT rebinding, and a new offer/answer, over real sockets on loopback,
 * where other 127.x addresses stand for other hosts.
 */
import t from 'tap';
import { FakeClock } from '../../../common/clock.js';
import { openTestSession, RtpPeer, settle } from '../../../../test/support/rtp-peer.js';
import { MediaBridge } from '../bridge/media-bridge.js';
import type { BridgeLegConfig } from '../bridge/bridge-leg.js';
import { useMediaIo, type MediaIoKind } from './media-socket.js';
import { nativeMediaIo } from './native-udp.js';
import { parseRtpHeader, serializeRtp, type RtpHeader } from './packet.js';
import { buildCompoundReport } from './rtcp.js';
import type { RtpSession } from './rtp-session.js';
import type { RtpRefusalReason } from './source-latch.js';

const voice = Buffer.alloc(160, 0x7e);
const strangerVoice = Buffer.alloc(160, 0x55);
const fields = (seq: number, ssrc: number) => ({ payloadType: 0, sequenceNumber: seq & 0xffff, timestamp: (seq * 160) >>> 0, ssrc });

function refusalCounter(): { by: Partial<Record<RtpRefusalReason, number>>; refused(reason: RtpRefusalReason): void } {
  const by: Partial<Record<RtpRefusalReason, number>> = {};
  return { by, refused: (reason) => { by[reason] = (by[reason] ?? 0) + 1; } };
}

async function stream(from: RtpPeer, port: number, first: number, count: number, ssrc: number, payload = voice): Promise<void> {
  for (let i = 0; i < count; i++) await from.sendRtp(port, fields(first + i, ssrc), payload);
}

// With telephone-event negotiated the bridge detects no in-band DTMF, so the addon may relay (ARCHITECTURE.md "Relay rules").
const pcmu = (session: RtpSession): BridgeLegConfig => ({
  session, encoding: 'PCMU', sendPayloadType: 0, receivePayloadType: 0, sendEventPayloadType: 101, receiveEventPayloadType: 101,
});

const kinds: MediaIoKind[] = nativeMediaIo() === null ? ['dgram'] : ['native', 'dgram'];
for (const kind of kinds) {
  t.test(`CVE-2017-14099 class (RTP bleed), ${kind} sockets: a third host's stream in sequence under a new SSRC gets no audio and is not relayed; the call's media stays with its far ends`, async (t) => {
    t.equal(useMediaIo(kind), kind);
    const clock = new FakeClock();
    const refusals = refusalCounter();
    const caller = await RtpPeer.open(t);
    const agent = await RtpPeer.open(t);
    const stranger = await RtpPeer.open(t, '127.0.0.2');
    const a = await openTestSession(t, { clock, refusals, rtcpIntervalMs: 1000 });
    const b = await openTestSession(t, { clock, refusals, rtcpIntervalMs: 1000 });
    a.setRemote({ address: '127.0.0.1', port: caller.port });
    b.setRemote({ address: '127.0.0.1', port: agent.port });
    const bridge = new MediaBridge({ clock, a: pcmu(a), b: pcmu(b) });
    t.teardown(() => bridge.close());
    // The call is answered and audio flows both ways (with the addon, relayed after each stream's first packet).
    await stream(caller, a.localPort, 1, 1, 0x1111);
    await stream(agent, b.localPort, 1, 1, 0x2222);
    await Promise.all([agent.waitFor(1), caller.waitFor(1)]);
    await stream(caller, a.localPort, 2, 9, 0x1111);
    await stream(agent, b.localPort, 2, 4, 0x2222);
    await Promise.all([agent.waitFor(10), caller.waitFor(5)]);
    if (kind === 'native') t.ok(a.relaying, 'the media I/O relays the caller stream by its rule');
    const relayedBefore = a.relayedPackets;

    // The tester's attack: 40 packets under a new SSRC in sequence, and an RTCP report, from a third host.
    await stream(stranger, a.localPort, 1000, 40, 0x6666, strangerVoice);
    const block = { ssrc: a.sequencer.ssrc, fractionLost: 0, cumulativeLost: 0, extendedHighestSeq: 1, jitter: 0, lastSr: 0, delaySinceLastSr: 0 };
    await stranger.sendRaw(a.localPort + 1, buildCompoundReport({ ssrc: 0x6666, cname: 'stranger', senderInfo: null, reports: [block] }));
    await settle(); // the call's own packets below come in reads of their own, which the addon relays again
    await stream(caller, a.localPort, 11, 10, 0x1111);
    await stream(agent, b.localPort, 6, 5, 0x2222);
    await Promise.all([agent.waitFor(20), caller.waitFor(10)]);
    clock.advance(3000); // RTCP reports fall due: they go to the far ends only
    await settle();

    t.equal(stranger.received.length, 0, 'the third host received nothing: no audio and no RTCP');
    t.same(a.remote, { address: '127.0.0.1', port: caller.port }, 'the leg still sends to the caller');
    t.equal(caller.received.filter((d) => parseRtpHeader(d.data) !== null && !(d.data[1]! >= 192 && d.data[1]! <= 223)).length, 10, "all of the agent's audio reached the caller");
    const atAgent = agent.received.filter((d) => d.data[1]! < 192 || d.data[1]! > 223);
    t.equal(atAgent.length, 20, "the caller's 20 packets reached the agent");
    t.notOk(atAgent.some((d) => d.data.subarray(12).equals(strangerVoice)), "none of the stranger's audio was relayed");
    if (kind === 'native') t.equal(a.relayedPackets - relayedBefore, 10, "the media I/O relayed the caller's packets, and none of the stranger's");
    t.equal(a.stats().packetsReceived, 20, "received, relayed or not: the caller's 20 packets and no other");
    t.equal(a.stats().packetsRejected, 40, 'every stranger packet refused');
    t.equal(a.stats().rtcpRejected, 1, 'and its RTCP');
    t.same(refusals.by, { source: 40, 'rtcp-source': 1 }, 'counted by reason');
  });
}

t.test('RFC 3550 8.2 and A.1, NAT rebinding: a new port of the latched host is learned after two packets in sequence, without waiting for the latched source to fall silent', async (t) => {
  const clock = new FakeClock(); // never advanced: the re-latch may not wait for the source to go quiet
  const refusals = refusalCounter();
  const session = await openTestSession(t, { clock, refusals });
  const carrier = await RtpPeer.open(t);
  const elsewhere = await RtpPeer.open(t, '127.0.0.2');
  session.setRemote({ address: '127.0.0.1', port: carrier.port });
  const heard: RtpHeader[] = [];
  session.take({ onRtp: (packet) => heard.push(parseRtpHeader(packet) as RtpHeader) });
  await stream(carrier, session.localPort, 1, 5, 0x1111);
  await settle();
  t.equal(heard.length, 5);
  // The carrier's NAT gives its stream a new port: same host, same SSRC, numbering going on.
  const rebound = await RtpPeer.open(t);
  await stream(rebound, session.localPort, 6, 1, 0x1111);
  await settle();
  t.equal(heard.length, 5, 'one packet is probation (RFC 3550 A.1 MIN_SEQUENTIAL)');
  await stream(rebound, session.localPort, 7, 1, 0x1111);
  await settle();
  t.same(heard.map((h) => h.sequenceNumber), [1, 2, 3, 4, 5, 7], 'the second in sequence is taken: one packet lost, not a second of audio');
  t.same(session.remote, { address: '127.0.0.1', port: rebound.port }, 'latched to the new port');
  session.send(serializeRtp(fields(1, 9), voice), 9);
  await rebound.waitFor(1);
  t.equal(carrier.received.length, 0, 'our audio goes to the new port at once');
  t.same(refusals.by, { probation: 1 }, 'the probation packet is counted');
  // The same SSRC and numbering from another host is still a stranger (strict source).
  await stream(elsewhere, session.localPort, 8, 10, 0x1111);
  await stream(rebound, session.localPort, 8, 1, 0x1111);
  await settle();
  t.equal(heard.length, 7, 'only the far end');
  t.same(session.remote, { address: '127.0.0.1', port: rebound.port });
  t.equal(refusals.by.source, 10);
  // Stale packets of the old port (behind the stream's numbering) never take it back.
  await stream(carrier, session.localPort, 3, 2, 0x1111);
  await settle();
  t.same(session.remote, { address: '127.0.0.1', port: rebound.port }, 'the old port does not win the stream back with old numbers');
  t.equal(refusals.by['ssrc-collision'], 2);
});

t.test('RFC 3264 and RFC 4961: a new offer/answer pointing elsewhere moves the media, and the old far end cannot take it back', async (t) => {
  const refusals = refusalCounter();
  const session = await openTestSession(t, { refusals });
  const old = await RtpPeer.open(t);
  const moved = await RtpPeer.open(t, '127.0.0.3');
  const behindNat = await RtpPeer.open(t, '127.0.0.4');
  session.setRemote({ address: '127.0.0.1', port: old.port });
  let heard = 0;
  session.take({ onRtp: () => heard++ });
  await stream(old, session.localPort, 1, 3, 0x1111);
  await settle();
  t.equal(heard, 3);
  session.setRemote({ address: moved.host, port: moved.port });
  session.send(serializeRtp(fields(1, 9), voice), 9);
  await moved.waitFor(1);
  t.equal(old.received.length, 0, 'media goes to the address the new SDP names');
  await stream(moved, session.localPort, 500, 1, 0x3333);
  await settle();
  t.equal(heard, 4, "the new far end's first packet is taken at once: its host is the one signalled");
  t.same(session.remote, { address: moved.host, port: moved.port });
  // The party moved away keeps sending, in sequence, under a new SSRC: a stranger now.
  await stream(old, session.localPort, 4, 10, 0x2222);
  await settle();
  t.equal(heard, 4, 'nothing of the old far end is taken');
  t.same(session.remote, { address: moved.host, port: moved.port }, 'and the media stays with the new one');
  t.equal(refusals.by.source, 10);
  // A far end whose SDP names an address it does not send from (behind a NAT) is learned after probation.
  session.setRemote({ address: '127.0.0.5', port: 4000 });
  await stream(behindNat, session.localPort, 1, 2, 0x4444);
  await settle();
  t.same(session.remote, { address: behindNat.host, port: behindNat.port }, 'learned after two packets in sequence, once the offer/answer opened learning');
  t.equal(heard, 5);
});

t.test('RFC 3264: before the answer the first packet latches; the answer discards that latch, and a sender it does not name is a stranger after it', async (t) => {
  const refusals = refusalCounter();
  const session = await openTestSession(t, { refusals });
  const early = await RtpPeer.open(t, '127.0.0.2');
  const answerer = await RtpPeer.open(t);
  await stream(early, session.localPort, 1, 1, 0x6666);
  await settle();
  t.same(session.remote, { address: early.host, port: early.port }, 'no SDP yet: latched to the first packet');
  session.setRemote({ address: '127.0.0.1', port: answerer.port });
  t.equal(session.isLatched, false, 'the answer starts learning afresh');
  await stream(answerer, session.localPort, 1, 1, 0x1111);
  await stream(early, session.localPort, 2, 5, 0x6666);
  await settle();
  t.same(session.remote, { address: '127.0.0.1', port: answerer.port });
  t.same(refusals.by, { source: 5 });
});

t.test("a carrier's media_networks: a latched leg may learn another of its media servers there, after probation, and nowhere else", async (t) => {
  const refusals = refusalCounter();
  const session = await openTestSession(t, { refusals, mediaNetworks: ['127.0.8.0/24'] });
  const first = await RtpPeer.open(t);
  const second = await RtpPeer.open(t, '127.0.8.9');
  const outside = await RtpPeer.open(t, '127.0.9.9');
  session.setRemote({ address: '127.0.0.1', port: first.port });
  await stream(first, session.localPort, 1, 3, 0x1111);
  await stream(outside, session.localPort, 1, 5, 0x2222);
  await settle();
  t.same(session.remote, { address: '127.0.0.1', port: first.port }, 'outside the networks: refused');
  await stream(second, session.localPort, 1, 2, 0x3333);
  await settle();
  t.same(session.remote, { address: second.host, port: second.port }, "the carrier's other media server, after two packets in sequence");
  t.same(refusals.by, { source: 5, probation: 1 });
});

t.test('rtp.strict_source off: the previous rule, where any host may take the stream with a new SSRC in sequence', async (t) => {
  const session = await openTestSession(t, { strictSource: false });
  const peer = await RtpPeer.open(t);
  const other = await RtpPeer.open(t, '127.0.0.2');
  session.setRemote({ address: '127.0.0.1', port: peer.port });
  await stream(peer, session.localPort, 1, 3, 0x1111);
  await stream(other, session.localPort, 100, 2, 0x6666);
  await settle();
  t.same(session.remote, { address: other.host, port: other.port }, 'the other host took the stream');
});
