/**
 * @module Hostile datagrams to media ports: garbage, oversized and malformed RTP and RTCP, foreign
 * and spoofed SSRCs, other source addresses and huge jumps, sent while a numbered stream flows
 * both ways through a media bridge and, apart, through a whole gateway call with a live agent.
 * Short form under `npm test`, two million datagrams under `npm run test:reliability`.
 */
import t from 'tap';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { FakeClock } from '../../src/common/clock.js';
import { isPortsExhausted, MediaBridge, RtpSession, type BridgeLegConfig, type PortPool } from '../../src/engine/media/index.js';
import { waitFor } from '../support/gateway-harness.js';
import { settle, testPortPool } from '../support/rtp-peer.js';
import { LONG_RUN, scaled } from './scale.js';
import { FakeCustomAgent } from '../support/fake-agent-servers/custom-agent-server.js';
import { mulawTone } from '../support/audio-probe.js';
import { startSipPhoneUa } from '../support/sip-phone.js';
import { emptyTally, runHostileRounds, type AttackedLeg } from './support/media-hostile-run.js';
import { callWithBareRtp, floodGatewayCall, legitFramesAtAgent, legitFramesInRecording } from './support/media-gateway-call.js';
import { DID, freeRtpRange, startMediaGateway } from './support/media-gateway.js';
import { StreamEnd } from './support/media-stream-ends.js';

const HOSTILE_PACKETS = scaled(20_000, 2_000_000);
/** Through a whole call the rounds keep real time (20 ms each), so fewer datagrams fit. */
const GATEWAY_HOSTILE_PACKETS = scaled(3_000, 100_000);
const GATEWAY_MAX_BATCH = 12;
const MAX_BATCH = 32;
const SEED = Number(process.env.VGW_FUZZ_SEED ?? 3550);
/** Heap growth allowed from the 10 % checkpoint to the end of the flood, after a forced GC at both. */
const HEAP_GROWTH_LIMIT = 8 * 1024 * 1024;

function forcedGc(): () => void {
  setFlagsFromString('--expose-gc');
  const gc: unknown = runInNewContext('gc');
  return typeof gc === 'function' ? () => { gc(); } : () => undefined;
}

const udpHandles = (): number => process.getActiveResourcesInfo().filter((r) => r === 'UDPWrap').length;
const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

async function openSession(clock: FakeClock, ports: PortPool, remotePort: number, strictSource = true): Promise<RtpSession> {
  const session = await RtpSession.open({ clock, ports, bindAddress: '127.0.0.1', rtcpIntervalMs: 0, mediaTimeoutMs: 0, strictSource });
  if (isPortsExhausted(session)) throw new Error('no RTP ports');
  session.setRemote({ address: '127.0.0.1', port: remotePort });
  return session;
}

const pcmu = (session: RtpSession): BridgeLegConfig => ({
  session, encoding: 'PCMU', sendPayloadType: 0, receivePayloadType: 0, sendEventPayloadType: null, receiveEventPayloadType: null,
});

t.test('RFC 3550 5.1, 6.4, 8.2, RFC 4961: hostile datagrams to both legs of a bridge change nothing the far ends hear, are counted, and leak nothing', async (t) => {
  const thrown: unknown[] = [];
  const onUncaught = (error: unknown): void => { thrown.push(error); };
  process.on('uncaughtException', onUncaught);
  t.teardown(() => process.off('uncaughtException', onUncaught));
  const gc = forcedGc();
  const handlesBefore = udpHandles();
  const clock = new FakeClock();
  const ports = testPortPool(8);
  const freeBefore = ports.available;
  const caller = await StreamEnd.open(t);
  const agent = await StreamEnd.open(t);
  const attacker = await StreamEnd.open(t);
  const a = await openSession(clock, ports, caller.port);
  const b = await openSession(clock, ports, agent.port);
  const bridge = new MediaBridge({ clock, a: pcmu(a), b: pcmu(b) });
  // Taps stand in for the recording and the agent stream: they must see whole frames only.
  const tapped = { frames: 0, oversize: 0 };
  const tap = (frame: { pcm: Int16Array }): void => { tapped.frames++; if (frame.pcm.length > 1500) tapped.oversize++; };
  bridge.setTap('a', 'received', tap);
  bridge.setTap('b', 'sent', tap);
  const legs: Record<'a' | 'b', AttackedLeg> = {
    a: { session: a, source: caller, sink: agent, stream: { ssrc: 0x1111, payloadType: 0 } },
    b: { session: b, source: agent, sink: caller, stream: { ssrc: 0x2222, payloadType: 0 } },
  };
  // Latch both legs with packet 0 of each stream.
  await caller.sendLegit(a.localPort, 0, 0x1111);
  await agent.sendLegit(b.localPort, 0, 0x2222);
  await Promise.all([agent.waitForLegit(1), caller.waitForLegit(1)]);
  t.ok(a.isLatched && b.isLatched, 'both legs latched to their far ends');

  // The first tenth warms up code and fast-check; growth is measured from there to the end.
  gc();
  const heapAtStart = process.memoryUsage().heapUsed;
  const tally = emptyTally();
  await runHostileRounds({ legs, attacker, bridge, total: HOSTILE_PACKETS / 10, maxBatch: MAX_BATCH, seed: SEED, tally });
  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  await runHostileRounds({ legs, attacker, bridge, total: HOSTILE_PACKETS, maxBatch: MAX_BATCH, seed: SEED, tally });
  gc();
  const heapAfter = process.memoryUsage().heapUsed;

  const legit = tally.legitPerDirection + 1;
  t.equal(agent.legitReceived, legit, `caller to agent: all ${legit} legitimate packets, in order, payload intact`);
  t.equal(caller.legitReceived, legit, `agent to caller: all ${legit} legitimate packets, in order, payload intact`);
  t.equal(agent.legitDamaged + caller.legitDamaged, 0, 'none damaged, repeated or reordered');
  t.equal(agent.sequenceBreaks + caller.sequenceBreaks, 0, 'back-to-back legitimate packets step by one in sequence at each far end');
  t.equal(agent.otherReceived, tally.expected.a.relayed, 'through leg a: only what the latched caller itself sent as well-formed audio');
  t.equal(caller.otherReceived, tally.expected.b.relayed, 'through leg b: only what the latched agent itself sent as well-formed audio');
  t.equal(tapped.oversize, 0, 'taps never saw a frame beyond the MTU');
  const stats = bridge.stats();
  for (const leg of ['a', 'b'] as const) {
    const s = stats[leg];
    const e = tally.expected[leg];
    t.equal(s.packetsInvalid, e.invalid, `leg ${leg}: packetsInvalid counts the non-RTP datagrams`);
    t.equal(s.packetsRejected, e.rejected, `leg ${leg}: packetsRejected counts every RTP packet from another address`);
    t.equal(s.packetsDropped, e.dropped, `leg ${leg}: packetsDropped counts the latched source's malformed, oversized or foreign-type packets`);
    t.equal(s.packetsReceived, legit + e.dropped + e.relayed, `leg ${leg}: packetsReceived is the legitimate stream plus what the latched address sent`);
    t.same(s.remote, { address: '127.0.0.1', port: legs[leg].source.port }, `leg ${leg}: still latched to its far end`);
  }
  t.same(thrown, [], 'nothing thrown');
  const growth = heapAfter - heapBefore;
  t.ok(growth < HEAP_GROWTH_LIMIT, `heap after GC at 10 % ${mb(heapBefore)}, at the end ${mb(heapAfter)} (${mb(growth)}), under ${mb(HEAP_GROWTH_LIMIT)}`);

  bridge.close();
  a.close();
  b.close();
  for (const end of [caller, agent, attacker]) end.close();
  await settle();
  t.equal(ports.available, freeBefore, 'every port back in the pool');
  t.equal(udpHandles(), handlesBefore, 'no UDP socket left open');
  t.comment(JSON.stringify({
    long: LONG_RUN, seed: SEED, hostileSent: tally.sent, rounds: tally.rounds, byKind: tally.byKind, byFrom: tally.byFrom,
    legitPerDirection: legit, expected: tally.expected, stats: { a: { ...stats.a, reception: undefined }, b: { ...stats.b, reception: undefined } },
    heapAtStart, heapAt10: heapBefore, heapAfter, handlesBefore, handlesAfter: udpHandles(),
  }));
});

// Another host (127.0.0.2) with rtp.strict_source off; with it on, that host is refused outright (rtp-session-strict.test.ts).
t.test('RFC 4961 and RFC 3550 A.1, strict_source off: the re-latch rule under a bridge: a foreign SSRC in sequence from another host takes over, the same SSRC from it never does while active', async (t) => {
  const clock = new FakeClock();
  const ports = testPortPool(8);
  const caller = await StreamEnd.open(t);
  const agent = await StreamEnd.open(t);
  const mover = await StreamEnd.open(t, '127.0.0.2');
  const a = await openSession(clock, ports, caller.port, false);
  const b = await openSession(clock, ports, agent.port, false);
  t.teardown(() => { a.close(); b.close(); });
  const bridge = new MediaBridge({ clock, a: pcmu(a), b: pcmu(b) });
  t.teardown(() => bridge.close());
  await caller.sendLegit(a.localPort, 0, 0x1111);
  await agent.waitForLegit(1);
  // The same SSRC and numbering from another host: a loop or a spoof (RFC 3550 8.2), refused.
  for (let i = 1; i <= 20; i++) await mover.sendLegit(a.localPort, i, 0x1111);
  await caller.sendLegit(a.localPort, 1, 0x1111);
  await agent.waitForLegit(2);
  t.equal(agent.otherReceived + agent.legitDamaged, 0, 'nothing of the spoofed stream reached the agent');
  t.equal(a.stats().packetsRejected, 20);
  // A new SSRC in sequence from elsewhere: a transferred source. One packet is probation, the second moves the latch.
  await mover.sendLegit(a.localPort, 2, 0x7777);
  await mover.sendLegit(a.localPort, 3, 0x7777);
  await waitFor('the new source at the agent', () => agent.legitDamaged > 0);
  t.equal(agent.legitDamaged, 1, 'one packet of the new source reached the agent (its index 3 follows 1: packet 2 was held back)');
  t.equal(a.remote?.port, mover.port, 'latched to the new source');
  t.equal(a.stats().packetsRejected, 21, 'its first packet was the probation');
});

t.test("RFC 3550 5.1, 8.2, RFC 4961: hostile datagrams at a live call's carrier leg leave the agent stream and the recording intact, and are counted", async (t) => {
  const thrown: unknown[] = [];
  const onUncaught = (error: unknown): void => { thrown.push(error); };
  process.on('uncaughtException', onUncaught);
  t.teardown(() => process.off('uncaughtException', onUncaught));
  const bot = await FakeCustomAgent.start();
  t.teardown(() => bot.core.close());
  const range = await freeRtpRange(8);
  const gw = await startMediaGateway(t, { rtp: range, agentUrl: bot.url });
  const carrier = await StreamEnd.open(t);
  const attacker = await StreamEnd.open(t);
  const ua = await startSipPhoneUa(t);
  const handlesBefore = udpHandles();
  const { session, gatewayPort } = await callWithBareRtp(ua, `sip:${DID}@127.0.0.1:${gw.gateway.sip.udpPort}`, carrier);
  await waitFor("the agent's start message", () => bot.events().includes('start'));
  // The agent talks all along, so the gateway's stream to the carrier carries its audio too.
  const tone = mulawTone(440, 1000);
  for (let i = 0; i < tone.length; i += 160) bot.sendAudio(tone.subarray(i, i + 160));
  const stream = { ssrc: 0x5151, payloadType: 0 };
  // Packet 0 latches the carrier leg before the flood: until the far end's first packet, any
  // well-formed packet latches (and a spoofer who already knew the SSRC could then hold it).
  const callId = await waitFor('the agent side attached', async () => {
    const r = await gw.api('GET', '/v1/calls?direction=inbound', undefined, { key: gw.liveKey });
    const id = r.body.data[0]?.id;
    const detail = id === undefined ? null : await gw.api('GET', `/v1/calls/${id}`, undefined, { key: gw.liveKey });
    const agentSide = (detail?.body.session as { agent?: { agent_input?: unknown } } | null)?.agent;
    return agentSide?.agent_input ? id : undefined;
  });
  const packet0SentAt = Date.now();
  await carrier.sendLegit(gatewayPort, 0, stream.ssrc);
  await waitFor('frame 0 at the agent', () => legitFramesAtAgent(bot).indices.length > 0);
  const tally = emptyTally();
  await floodGatewayCall({ port: gatewayPort, bot, carrier, attacker, stream, total: GATEWAY_HOSTILE_PACKETS, maxBatch: GATEWAY_MAX_BATCH, seed: SEED, tally, packet0SentAt });
  const sent = tally.legitPerDirection;
  let atAgent = legitFramesAtAgent(bot);
  await waitFor('every legitimate frame at the agent', () => (atAgent = legitFramesAtAgent(bot)).indices.length >= sent + 1, 20_000).catch(() => undefined);
  t.comment(JSON.stringify({ agentFrames: atAgent.indices.length, head: atAgent.indices.slice(0, 10), damaged: atAgent.damaged, audioBytes: bot.receivedAudio().length, sent }));
  t.same(atAgent.indices.slice(0, 3), [0, 1, 2], 'the agent stream starts with the first legitimate frame');
  t.ok(atAgent.indices.length === sent + 1 && atAgent.indices.every((index, i) => index === i), `all ${sent + 1} legitimate frames reached the agent once, in order`);
  t.equal(atAgent.damaged, 0, 'no legitimate frame damaged');
  const detail = await gw.api('GET', `/v1/calls/${callId}`, undefined, { key: gw.liveKey });
  const stats = (detail.body.session as unknown as { agent: { packets_dropped: number; rtp: { packets_received: number; packets_rejected: number } } }).agent;
  t.equal(stats.rtp.packets_rejected, tally.expected.a.rejected, 'packets_rejected counts every RTP packet from another address');
  t.equal(stats.packets_dropped, tally.expected.a.dropped, "packets_dropped counts the carrier's own malformed, oversized or foreign-type packets");
  t.equal(stats.rtp.packets_received, sent + 1 + tally.expected.a.dropped, 'packets_received is the legitimate stream plus the dropped ones from its address');
  t.equal(attacker.otherReceived + attacker.legitReceived, 0, 'the gateway never sent the attacker any media: the latch held');
  // RTCP follows its source from the latched host (RFC 4961), and on loopback the attacker shares that host.
  t.comment(`RTCP reports the gateway sent to the attacker's port (same host as the carrier): ${attacker.rtcpReceived}`);
  t.ok(carrier.otherReceived > 0, "the carrier kept receiving the gateway's stream");

  await session.bye();
  const ended = await waitFor('recording attached', async () => {
    const r = await gw.api('GET', `/v1/calls/${callId}`, undefined, { key: gw.liveKey });
    return r.body.recording.available ? r.body : undefined;
  });
  t.equal(ended.state, 'ended');
  const recording = await fetch(`${gw.base}/v1/calls/${callId}/recording`, { headers: { authorization: `Bearer ${gw.liveKey}` } });
  t.equal(recording.status, 200);
  const inRecording = legitFramesInRecording(Buffer.from(await recording.arrayBuffer()), sent);
  t.equal(inRecording, sent, `all ${sent} legitimate frames, decoded, in order in the recording's caller channel (first 10 ms of each compared)`);
  t.same(thrown, [], 'nothing thrown');
  await waitFor("the call's sockets closed", () => udpHandles() <= handlesBefore);
  t.equal(udpHandles(), handlesBefore, 'UDP handles back to where they were before the call');
  t.comment(JSON.stringify({ long: LONG_RUN, seed: SEED, hostileSent: tally.sent, rounds: tally.rounds, byKind: tally.byKind, byFrom: tally.byFrom, expected: tally.expected.a, legitSent: sent, attackerRtcp: attacker.rtcpReceived, atAgent: atAgent.indices.length, inRecording, stats }));
});
