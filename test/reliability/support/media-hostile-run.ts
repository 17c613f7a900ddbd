/**
 * @module Sends fast-check batches of hostile datagrams at the two legs of a media bridge while a
 * numbered legitimate stream flows both ways, and keeps the tallies the report quotes: packets per
 * kind and source, what the rules let through, and what the engine's counters must read.
 */
import fc from 'fast-check';
import { isRtcpPacket, type MediaBridge, type RtpSession } from '../../../src/engine/media/index.js';
import { hostilePacket, jumboPacket, passesThrough, type HostilePacket, type StreamIdentity } from './media-hostile-packets.js';
import type { StreamEnd } from './media-stream-ends.js';

export type LegName = 'a' | 'b';

/** One leg under attack: its session, the end that sends to it, and the end that hears what it relays. */
export interface AttackedLeg {
  session: RtpSession;
  /** The latched far end of this leg (sends the legitimate stream into it). */
  source: StreamEnd;
  /** The far end of the other leg, where this leg's audio comes out. */
  sink: StreamEnd;
  stream: StreamIdentity;
}

/** What the engine's counters must read for the hostile packets, by the documented rules. */
export interface ExpectedCounters {
  /** RTP-port datagrams that are neither RTCP nor RTP version 2 of at least 12 octets. */
  invalid: number;
  /** From another address: refused by latching. */
  rejected: number;
  /** From the latched address, taken by the session, dropped by the bridge (payload type, header, size). */
  dropped: number;
  /** From the latched address and relayed (indistinguishable from the far end's media). */
  relayed: number;
}

export interface HostileTally {
  sent: number;
  byKind: Record<string, number>;
  byFrom: Record<string, number>;
  expected: Record<LegName, ExpectedCounters>;
  rounds: number;
  legitPerDirection: number;
}

const counters = (): ExpectedCounters => ({ invalid: 0, rejected: 0, dropped: 0, relayed: 0 });

export function emptyTally(): HostileTally {
  return { sent: 0, byKind: {}, byFrom: {}, expected: { a: counters(), b: counters() }, rounds: 0, legitPerDirection: 0 };
}

function classify(packet: HostilePacket, stream: StreamIdentity, into: ExpectedCounters): void {
  if (packet.to !== 'rtp' || isRtcpPacket(packet.data)) return;
  const d = packet.data;
  if (d.length < 12 || d[0]! >> 6 !== 2) into.invalid++;
  else if (packet.from === 'other') into.rejected++;
  else if (passesThrough(packet, stream)) into.relayed++;
  else into.dropped++;
}

/** A batch: up to `maxBatch` hostile datagrams, each for leg a or b, and now and then a 65,000-byte one. */
function batchArbitrary(legs: Record<LegName, AttackedLeg>, maxBatch: number): fc.Arbitrary<{ leg: LegName; packet: HostilePacket }[]> {
  const one = (leg: LegName): fc.Arbitrary<{ leg: LegName; packet: HostilePacket }> => hostilePacket(legs[leg].stream).map((packet) => ({ leg, packet }));
  const item = fc.oneof(one('a'), one('b'));
  const jumbo = fc.oneof(
    { weight: 1, arbitrary: fc.constantFrom<LegName>('a', 'b').chain((leg) => jumboPacket.map((packet) => [{ leg, packet }])) },
    { weight: 400, arbitrary: fc.constant([]) },
  );
  return fc.tuple(fc.array(item, { minLength: 1, maxLength: maxBatch, size: 'max' }), jumbo).map(([items, big]) => [...items, ...big]);
}

/**
 * Runs rounds until `total` hostile datagrams went out. Each round sends its batch, then one
 * legitimate packet each way, and checks at both far ends that the legitimate packet arrived
 * intact and in order and that exactly the hostile packets the rules pass arrived before it.
 * The wait for the legitimate packet also keeps socket buffers from overflowing.
 */
export async function runHostileRounds(options: {
  legs: Record<LegName, AttackedLeg>;
  attacker: StreamEnd;
  bridge: MediaBridge;
  total: number;
  maxBatch: number;
  seed: number;
  tally: HostileTally;
}): Promise<void> {
  const { legs, attacker, total, tally } = options;
  // Far-end counts and the tally are compared from where this call starts (a run may come in parts).
  const seen: Record<LegName, number> = { a: legs.a.sink.otherReceived, b: legs.b.sink.otherReceived };
  const passed: Record<LegName, number> = { a: tally.expected.a.relayed, b: tally.expected.b.relayed };
  const property = fc.asyncProperty(batchArbitrary(legs, options.maxBatch), async (batch) => {
    for (const { leg, packet } of batch) {
      const target = legs[leg];
      const from = packet.from === 'latched' ? target.source : attacker;
      await from.sendRaw(target.session.localPort + (packet.to === 'rtcp' ? 1 : 0), packet.data);
      tally.sent++;
      tally.byKind[packet.kind] = (tally.byKind[packet.kind] ?? 0) + 1;
      tally.byFrom[packet.from] = (tally.byFrom[packet.from] ?? 0) + 1;
      classify(packet, target.stream, tally.expected[leg]);
    }
    const index = ++tally.legitPerDirection;
    await Promise.all((['a', 'b'] as const).map((leg) => legs[leg].source.sendLegit(legs[leg].session.localPort, index, legs[leg].stream.ssrc)));
    await Promise.all((['a', 'b'] as const).map((leg) => legs[leg].sink.waitForLegit(index + 1)));
    tally.rounds++;
    for (const leg of ['a', 'b'] as const) {
      const sink = legs[leg].sink;
      if (sink.legitDamaged !== 0) throw new Error(`leg ${leg}: ${sink.legitDamaged} legitimate packets damaged or out of order`);
      const through = sink.otherReceived - seen[leg];
      const rule = tally.expected[leg].relayed - passed[leg];
      if (through !== rule) throw new Error(`leg ${leg}: ${through} hostile packets came through, the rules pass ${rule}`);
    }
  });
  // Each property run is one round; the run count is an upper bound, the loop stops at `total`.
  while (tally.sent < total) {
    const remaining = total - tally.sent;
    const runs = Math.max(1, Math.ceil(remaining / ((options.maxBatch + 1) / 2)));
    await fc.assert(property, { numRuns: Math.min(runs, 2000), seed: options.seed + tally.rounds, endOnFailure: true });
  }
}
