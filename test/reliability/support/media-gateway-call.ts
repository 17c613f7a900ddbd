/**
 * @module Hostile datagrams at a live gateway call: a carrier whose RTP is a bare socket we own
 * (so hostile packets can come from its very address) calls a DID routed to a fake WebSocket
 * agent; numbered caller audio paced at 20 ms must reach the agent and the recording intact.
 */
import fc from 'fast-check';
import { CODECS, createOffer, isSdpRejection, processAnswer, ulawDecode, type LocalCapabilities } from '../../../src/engine/media/index.js';
import type { SessionDialog } from '../../../src/engine/sip/index.js';
import type { FakeCustomAgent } from '../../support/fake-agent-servers/custom-agent-server.js';
import { answered, type startSipPhoneUa } from '../../support/sip-phone.js';
import type { HostileTally } from './media-hostile-run.js';
import { hostilePacket, passesThrough, type HostilePacket, type StreamIdentity } from './media-hostile-packets.js';
import { legitPayload, type StreamEnd } from './media-stream-ends.js';

/** The carrier's SIP user agent (startSipPhoneUa), started before the call so its socket is not counted as the call's. */
export type PhoneUa = Awaited<ReturnType<typeof startSipPhoneUa>>;

/** Calls `target` with an SDP offer naming `carrier`'s socket as our RTP (PCMU only, so no payload type means DTMF); returns the gateway's RTP port. */
export async function callWithBareRtp(ua: PhoneUa, target: string, carrier: StreamEnd): Promise<{ session: SessionDialog; gatewayPort: number }> {
  const caps: LocalCapabilities = { address: '127.0.0.1', port: carrier.port, codecs: [CODECS.PCMU], sessionId: 9, sessionVersion: 1 };
  const { session, answer } = await answered(ua.ua.invite({ target, from: 'sip:+15557770001@127.0.0.1', sdp: Buffer.from(createOffer(caps)) }));
  const negotiated = processAnswer(answer.toString('utf8'), caps);
  if (isSdpRejection(negotiated)) throw new Error(`bad answer: ${JSON.stringify(negotiated)}`);
  return { session, gatewayPort: negotiated.remote.rtp.port };
}

/**
 * Hostile datagrams for the gateway's carrier leg. From the latched carrier's own address only
 * those the rules drop: what they pass is media of that carrier, indistinguishable from the
 * real thing (the bridge run counts those), and would shift the agent's 20 ms frames.
 */
export function gatewayBatch(stream: StreamIdentity, maxBatch: number): fc.Arbitrary<HostilePacket[]> {
  const packet = hostilePacket(stream).filter((p) => !passesThrough(p, stream));
  return fc.array(packet, { minLength: 1, maxLength: maxBatch, size: 'max' });
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Index of the legitimate frame in the agent's latest `media` message, or -1. */
function lastIndexAtAgent(bot: FakeCustomAgent): number {
  const frames = bot.core.frames;
  for (let i = frames.length - 1; i >= 0; i--) {
    const frame = frames[i]!;
    if (frame.kind !== 'json' || frame.message.event !== 'media') continue;
    const encoded = (frame.message.media as { payload?: unknown } | undefined)?.payload;
    const payload = Buffer.from(typeof encoded === 'string' ? encoded : '', 'base64');
    return payload.subarray(0, 9).toString() === 'VGW-LEGIT' ? payload.readUInt32BE(9) : -1;
  }
  return -1;
}

/**
 * Waits until the agent got legitimate frame `index`: the gateway has then read every datagram
 * sent before it, so the next batch cannot overflow its socket buffer. A hang guard, not a timing check.
 */
async function agentReached(bot: FakeCustomAgent, index: number, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (lastIndexAtAgent(bot) < index) {
    if (Date.now() > deadline) throw new Error(`legitimate frame ${index} never reached the agent (last ${lastIndexAtAgent(bot)})`);
    await sleep(2);
  }
}

/**
 * Sends `total` hostile datagrams in batches, each followed by the next legitimate packet in
 * real time (see below), each round once the agent got the previous legitimate frame. Batches
 * stay small so that a round's work fits in its 20 ms and the stream does not fall behind: the
 * recorder drops what arrives more than its alignment window (500 ms) late.
 */
export async function floodGatewayCall(options: {
  port: number;
  bot: FakeCustomAgent;
  carrier: StreamEnd;
  attacker: StreamEnd;
  stream: StreamIdentity;
  total: number;
  maxBatch: number;
  seed: number;
  tally: HostileTally;
  /** When legitimate packet 0 (timestamp 0) went out, in Date.now() milliseconds. */
  packet0SentAt: number;
}): Promise<void> {
  const { carrier, attacker, tally } = options;
  const started = options.packet0SentAt;
  const property = fc.asyncProperty(gatewayBatch(options.stream, options.maxBatch), async (batch) => {
    for (const packet of batch) {
      await (packet.from === 'latched' ? carrier : attacker).sendRaw(options.port + (packet.to === 'rtcp' ? 1 : 0), packet.data);
      tally.sent++;
      tally.byKind[packet.kind] = (tally.byKind[packet.kind] ?? 0) + 1;
      tally.byFrom[packet.from] = (tally.byFrom[packet.from] ?? 0) + 1;
      const d = packet.data;
      if (packet.to === 'rtp' && !(d.length >= 2 && d[1]! >= 192 && d[1]! <= 223)) {
        if (d.length < 12 || d[0]! >> 6 !== 2) tally.expected.a.invalid++;
        else if (packet.from === 'other') tally.expected.a.rejected++;
        else tally.expected.a.dropped++;
      }
    }
    const index = ++tally.legitPerDirection;
    // Packet `index` leaves no sooner than 20 ms per packet after packet 0, as from a real
    // sender: the recorder places audio by RTP time against arrival time, and a packet early
    // for its timestamp would move its anchor (a late one is placed where its timestamp says).
    const due = started + index * 20;
    if (due > Date.now()) await sleep(due - Date.now());
    await carrier.sendLegit(options.port, index, options.stream.ssrc);
    await agentReached(options.bot, index);
    tally.rounds++;
  });
  while (tally.sent < options.total) {
    const runs = Math.ceil((options.total - tally.sent) / ((options.maxBatch + 1) / 2));
    await fc.assert(property, { numRuns: Math.min(runs, 1000), seed: options.seed + tally.rounds, endOnFailure: true });
  }
}

/** Indices of the legitimate 20 ms frames in the agent's received µ-law, in order, and how many were damaged. */
export function legitFramesAtAgent(bot: FakeCustomAgent): { indices: number[]; damaged: number } {
  const audio = bot.receivedAudio();
  const indices: number[] = [];
  let damaged = 0;
  for (let at = audio.indexOf('VGW-LEGIT'); at >= 0; at = audio.indexOf('VGW-LEGIT', at + 1)) {
    const index = audio.readUInt32BE(at + 9);
    if (audio.subarray(at, at + 160).equals(legitPayload(index))) indices.push(index);
    else damaged++;
  }
  return { indices, damaged };
}

/** Samples compared at the head of each frame: 10 ms. */
const HEAD = 80;

/**
 * How many of legitimate frames 1..`count` appear, decoded, in order in the recording's left
 * channel: each is looked for right after the previous one first, then further on (a re-anchor
 * may leave a gap). Only each frame's first 10 ms are compared: when a packet arrives with less
 * delay than any before, the recorder moves its anchor earlier by that difference (a few ms), and
 * the packet then overwrites the tail of the one before it.
 */
export function legitFramesInRecording(wav: Buffer, count: number): number {
  const dataAt = wav.indexOf('data') + 8;
  const frames = Math.floor((wav.length - dataAt) / 4);
  const left = new Int16Array(frames);
  for (let i = 0; i < frames; i++) left[i] = wav.readInt16LE(dataAt + i * 4);
  const want = new Int16Array(160);
  const matchesAt = (i: number): boolean => {
    for (let k = 0; k < HEAD; k++) if (left[i + k] !== want[k]) return false;
    return true;
  };
  let pos = 0;
  let found = 0;
  for (let index = 1; index <= count; index++) {
    ulawDecode(legitPayload(index), want);
    let at = pos + HEAD <= left.length && matchesAt(pos) ? pos : -1;
    for (let i = Math.max(0, pos - 160); at < 0 && i + HEAD <= left.length; i++) if (matchesAt(i)) at = i;
    if (at < 0) continue;
    found++;
    pos = at + 160;
  }
  return found;
}
