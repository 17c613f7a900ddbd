/**
 * @module fast-check generators of hostile datagrams for media ports (garbage, malformed RTP and
 * RTCP headers, foreign or spoofed sources, huge jumps), and the rule that says which of them a
 * latched RTP session passes on to the other side.
 */
import fc from 'fast-check';
import { isRtcpPacket, rtpPayloadOffset, serializeRtp } from '../../../src/engine/media/index.js';

/** What the datagram tries; the tallies in the report are per kind. */
export type HostileKind =
  | 'random' | 'jumbo' | 'truncated-header' | 'bad-version' | 'bad-padding' | 'csrc-overrun' | 'extension-overrun'
  | 'rtcp-lying-length' | 'foreign-ssrc' | 'spoofed-ssrc' | 'huge-jump';

/** Sent from a socket of its own, or from the latched peer's own address and port. */
export type HostileFrom = 'other' | 'latched';

/** Sent to the session's RTP port or to its RTCP port (port + 1). */
export type HostileTo = 'rtp' | 'rtcp';

export interface HostilePacket {
  kind: HostileKind;
  from: HostileFrom;
  to: HostileTo;
  data: Buffer;
}

/** The legitimate stream's identity, which some kinds imitate. */
export interface StreamIdentity {
  ssrc: number;
  payloadType: number;
}

const bytes = (min: number, max: number): fc.Arbitrary<Buffer> =>
  fc.uint8Array({ minLength: min, maxLength: max }).map((a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength));

const u16 = fc.noBias(fc.integer({ min: 0, max: 0xffff }));
const u32 = fc.noBias(fc.integer({ min: 0, max: 0xffffffff }));
const pt = fc.integer({ min: 0, max: 127 });

/** A well-formed RTP packet with the given fields and a random G.711-sized payload. */
function rtp(fields: { payloadType: number; sequenceNumber: number; timestamp: number; ssrc: number }, payload: Buffer): Buffer {
  return serializeRtp(fields, payload);
}

const wellFormed = fc.record({ payloadType: pt, sequenceNumber: u16, timestamp: u32, ssrc: u32, payload: bytes(0, 320) })
  .map(({ payload, ...fields }) => rtp(fields, payload));

/** Garbage in the RTP fixed header's first octet or lengths: each one names a rule of RFC 3550 §5.1 or §5.3.1. */
function malformed(kind: HostileKind): fc.Arbitrary<Buffer> {
  switch (kind) {
    case 'truncated-header':
      return fc.tuple(wellFormed, fc.integer({ min: 0, max: 11 })).map(([p, n]) => Buffer.from(p.subarray(0, n)));
    case 'bad-version':
      return fc.tuple(wellFormed, fc.constantFrom(0, 1, 3)).map(([p, v]) => { p[0] = (p[0]! & 0x3f) | (v << 6); return p; });
    case 'bad-padding':
      // P set and the count either zero or larger than what follows the header.
      return fc.tuple(wellFormed, fc.boolean()).map(([p, zero]) => {
        p[0] = p[0]! | 0x20;
        p[p.length - 1] = zero ? 0 : Math.min(255, p.length - 11);
        return p;
      });
    case 'csrc-overrun':
      return fc.tuple(fc.integer({ min: 1, max: 15 }), pt, u32, bytes(0, 56)).map(([cc, type, ssrc, tail]) => {
        const head = rtp({ payloadType: type, sequenceNumber: 1, timestamp: 1, ssrc }, Buffer.alloc(0));
        head[0] = 0x80 | cc;
        return Buffer.concat([head, tail.subarray(0, Math.max(0, cc * 4 - 1))]);
      });
    case 'extension-overrun':
      return fc.tuple(fc.integer({ min: 1, max: 0xffff }), pt, u32, bytes(0, 64)).map(([words, type, ssrc, body]) => {
        const head = rtp({ payloadType: type, sequenceNumber: 1, timestamp: 1, ssrc }, Buffer.alloc(0));
        head[0] = 0x90;
        const ext = Buffer.alloc(4);
        ext.writeUInt16BE(0xbede, 0);
        ext.writeUInt16BE(words, 2);
        return Buffer.concat([head, ext, body.subarray(0, Math.min(body.length, words * 4 - 1))]);
      });
    case 'rtcp-lying-length':
      // RFC 3550 §6.4: V=2, a count, SR/RR/SDES/BYE/APP, and a length field that disagrees with the datagram.
      return fc.tuple(fc.integer({ min: 0, max: 31 }), fc.integer({ min: 200, max: 204 }), u16, bytes(0, 64)).map(([rc, type, words, body]) => {
        const head = Buffer.from([0x80 | rc, type, words >> 8, words & 0xff]);
        return Buffer.concat([head, body]);
      });
    default:
      throw new Error(`not a malformed kind: ${kind}`);
  }
}

const MALFORMED: HostileKind[] = ['truncated-header', 'bad-version', 'bad-padding', 'csrc-overrun', 'extension-overrun', 'rtcp-lying-length'];

/**
 * One hostile datagram. Well-formed RTP kinds carry even sequence numbers, so two of them never
 * form the run in sequence that would move the latch by the documented rule (tested apart).
 */
export function hostilePacket(stream: StreamIdentity): fc.Arbitrary<HostilePacket> {
  const from = fc.constantFrom<HostileFrom>('other', 'latched');
  const to = fc.oneof({ weight: 4, arbitrary: fc.constant<HostileTo>('rtp') }, { weight: 1, arbitrary: fc.constant<HostileTo>('rtcp') });
  const kinds: { weight: number; arbitrary: fc.Arbitrary<{ kind: HostileKind; data: Buffer }> }[] = [
    { weight: 6, arbitrary: bytes(0, 2000).map((data) => ({ kind: 'random' as const, data })) },
    ...MALFORMED.map((kind) => ({ weight: 2, arbitrary: malformed(kind).map((data) => ({ kind, data })) })),
    {
      weight: 2,
      arbitrary: fc.record({ payloadType: fc.constant(stream.payloadType), sequenceNumber: u16.map((s) => s & 0xfffe), timestamp: u32, ssrc: u32, payload: bytes(0, 320) })
        .filter((f) => f.ssrc !== stream.ssrc)
        .map(({ payload, ...fields }) => ({ kind: 'foreign-ssrc' as const, data: rtp(fields, payload) })),
    },
    {
      weight: 1,
      arbitrary: fc.record({ sequenceNumber: u16.map((seq) => seq & 0xfffe), timestamp: u32, payload: bytes(0, 320) })
        .map(({ payload, ...f }) => ({ kind: 'spoofed-ssrc' as const, data: rtp({ ...f, payloadType: stream.payloadType, ssrc: stream.ssrc }, payload) })),
    },
    {
      weight: 1,
      arbitrary: fc.record({ jump: fc.integer({ min: 3000, max: 0xffff }), timestamp: u32, payload: bytes(160, 160) })
        .map(({ jump, timestamp, payload }) => ({
          kind: 'huge-jump' as const,
          data: rtp({ payloadType: stream.payloadType, sequenceNumber: jump & 0xfffe, timestamp, ssrc: stream.ssrc }, payload),
        })),
    },
  ];
  return fc.record({ body: fc.oneof(...kinds), from, to }).map(({ body, from: f, to: d }) => ({ ...body, from: f, to: d }));
}

/** A 65,000-byte datagram of random bytes: a few per run, since each one fills a good part of a socket buffer. */
export const jumboPacket: fc.Arbitrary<HostilePacket> = fc.record({ from: fc.constantFrom<HostileFrom>('other', 'latched'), fill: fc.integer({ min: 0, max: 255 }), head: bytes(12, 12) })
  .map(({ from, fill, head }) => {
    const data = Buffer.alloc(65_000, fill);
    head.copy(data);
    return { kind: 'jumbo' as const, from, to: 'rtp' as const, data };
  });

/**
 * Whether the session and bridge pass `packet` on, by the documented rules: only datagrams on the
 * RTP port, from the latched address, that are RTP (not RTCP by RFC 5761 §4), version 2, with a
 * header that fits the packet (RFC 3550 §5.1, §5.3.1), the negotiated audio payload type and a
 * payload no larger than an Ethernet MTU. The
 * SSRC does not matter from the latched address (it is the far end, RFC 4961); from any other
 * address nothing passes, since these single packets never complete the re-latch probation.
 */
export function passesThrough(packet: HostilePacket, stream: StreamIdentity): boolean {
  const d = packet.data;
  if (packet.to !== 'rtp' || packet.from !== 'latched') return false;
  if (isRtcpPacket(d) || d.length < 12 || d[0]! >> 6 !== 2) return false;
  const offset = rtpPayloadOffset(d);
  const end = d.length - (d[0]! & 0x20 ? d[d.length - 1]! : 0);
  return (d[1]! & 0x7f) === stream.payloadType && offset >= 0 && end - offset <= MAX_RELAYED_PAYLOAD;
}

/** The bridge's largest relayed payload (an Ethernet MTU): more is not audio from a real call. */
export const MAX_RELAYED_PAYLOAD = 1500;
