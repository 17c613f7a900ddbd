/** @module RTP packet header (RFC 3550 §5.1): parse, serialize and rewrite fields in place. */

/*
 * RTP fixed header, RFC 3550 §5.1:
 *
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |V=2|P|X|  CC   |M|     PT      |       sequence number         |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                           timestamp                           |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |           synchronization source (SSRC) identifier            |
 * +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
 * |            contributing source (CSRC) identifiers             |
 * |                             ....                              |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *
 * Header extension, RFC 3550 §5.3.1 (present when X is set):
 *
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |      defined by profile       |           length              |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                        header extension                       |
 * |                             ....                              |
 *
 * `length` counts 32-bit words after the 4-byte extension header. With P set, the last payload
 * octet counts the padding octets, itself included (RFC 3550 §5.1).
 */

export const RTP_VERSION = 2;
export const RTP_HEADER_SIZE = 12;
const VERSION_SHIFT = 6;
const PADDING_MASK = 0x20;
const EXTENSION_MASK = 0x10;
const CC_MASK = 0x0f;
const MARKER_MASK = 0x80;
const PT_MASK = 0x7f;
const SEQ_OFFSET = 2;
const TIMESTAMP_OFFSET = 4;
const SSRC_OFFSET = 8;
const CSRC_SIZE = 4;
const EXTENSION_HEADER_SIZE = 4;

/** A parsed RTP header plus where the payload lies in the buffer it came from. */
export interface RtpHeader {
  version: number;
  padding: boolean;
  extension: boolean;
  marker: boolean;
  payloadType: number;
  sequenceNumber: number;
  timestamp: number;
  ssrc: number;
  csrc: number[];
  /** The profile-defined 16 bits of the extension header (0 when absent). */
  extensionProfile: number;
  /** Extension body without its 4-byte header; a view into the parsed buffer. */
  extensionPayload: Buffer | null;
  payloadOffset: number;
  payloadLength: number;
  paddingSize: number;
}

/** Why a datagram is not a valid RTP packet: a value, since peers send garbage. */
export type RtpParseError = { error: 'too-short' | 'bad-version' | 'bad-extension' | 'bad-padding' };

/**
 * Offset of the payload in `buf`, or -1 when the header is malformed. Allocation-free: the relay
 * calls it for every packet.
 */
export function rtpPayloadOffset(buf: Buffer): number {
  if (buf.length < RTP_HEADER_SIZE || buf[0]! >> VERSION_SHIFT !== RTP_VERSION) return -1;
  let offset = RTP_HEADER_SIZE + (buf[0]! & CC_MASK) * CSRC_SIZE;
  if (buf[0]! & EXTENSION_MASK) {
    if (buf.length < offset + EXTENSION_HEADER_SIZE) return -1;
    offset += EXTENSION_HEADER_SIZE + buf.readUInt16BE(offset + 2) * 4;
  }
  return offset <= buf.length - rtpPaddingSize(buf) ? offset : -1;
}

/** Padding octets at the end of the packet (0 without the P bit). */
export function rtpPaddingSize(buf: Buffer): number {
  return buf[0]! & PADDING_MASK ? buf[buf.length - 1]! : 0;
}

/** Parses the header of `buf`, keeping views into it rather than copies. */
export function parseRtpHeader(buf: Buffer): RtpHeader | RtpParseError {
  if (buf.length < RTP_HEADER_SIZE) return { error: 'too-short' };
  const b0 = buf[0]!;
  const b1 = buf[1]!;
  if (b0 >> VERSION_SHIFT !== RTP_VERSION) return { error: 'bad-version' };
  const cc = b0 & CC_MASK;
  let offset = RTP_HEADER_SIZE + cc * CSRC_SIZE;
  if (buf.length < offset) return { error: 'too-short' };
  const csrc: number[] = [];
  for (let i = 0; i < cc; i++) csrc.push(buf.readUInt32BE(RTP_HEADER_SIZE + i * CSRC_SIZE));
  let extensionProfile = 0;
  let extensionPayload: Buffer | null = null;
  if (b0 & EXTENSION_MASK) {
    if (buf.length < offset + EXTENSION_HEADER_SIZE) return { error: 'bad-extension' };
    extensionProfile = buf.readUInt16BE(offset);
    const words = buf.readUInt16BE(offset + 2);
    const start = offset + EXTENSION_HEADER_SIZE;
    if (buf.length < start + words * 4) return { error: 'bad-extension' };
    extensionPayload = buf.subarray(start, start + words * 4);
    offset = start + words * 4;
  }
  let paddingSize = 0;
  if (b0 & PADDING_MASK) {
    paddingSize = buf[buf.length - 1]!;
    // RFC 3550 §5.1: the count includes itself, so zero padding with P set is malformed.
    if (paddingSize === 0 || offset + paddingSize > buf.length) return { error: 'bad-padding' };
  }
  return {
    version: RTP_VERSION,
    padding: paddingSize > 0,
    extension: extensionPayload !== null,
    marker: (b1 & MARKER_MASK) !== 0,
    payloadType: b1 & PT_MASK,
    sequenceNumber: buf.readUInt16BE(SEQ_OFFSET),
    timestamp: buf.readUInt32BE(TIMESTAMP_OFFSET),
    ssrc: buf.readUInt32BE(SSRC_OFFSET),
    csrc,
    extensionProfile,
    extensionPayload,
    payloadOffset: offset,
    payloadLength: buf.length - offset - paddingSize,
    paddingSize,
  };
}

/** Fields needed to write a packet; extension and padding are optional. */
export interface RtpPacketFields {
  marker?: boolean;
  payloadType: number;
  sequenceNumber: number;
  timestamp: number;
  ssrc: number;
  csrc?: readonly number[];
  extensionProfile?: number;
  /** Must be a multiple of 4 octets (RFC 3550 §5.3.1 counts it in 32-bit words). */
  extensionPayload?: Buffer;
  paddingSize?: number;
}

/** Writes a complete RTP packet into a new buffer. Used off the relay path (generated audio, tests). */
export function serializeRtp(fields: RtpPacketFields, payload: Uint8Array): Buffer {
  const csrc = fields.csrc ?? [];
  if (csrc.length > CC_MASK) throw new RangeError('at most 15 CSRC identifiers');
  const ext = fields.extensionPayload;
  if (ext && ext.length % 4 !== 0) throw new RangeError('extension length must be a multiple of 4');
  const pad = fields.paddingSize ?? 0;
  const headerSize = RTP_HEADER_SIZE + csrc.length * CSRC_SIZE + (ext ? EXTENSION_HEADER_SIZE + ext.length : 0);
  const buf = Buffer.alloc(headerSize + payload.length + pad);
  writeRtpHeader(buf, fields.payloadType, fields.sequenceNumber, fields.timestamp, fields.ssrc, fields.marker ?? false);
  buf[0] = (RTP_VERSION << VERSION_SHIFT) | (pad > 0 ? PADDING_MASK : 0) | (ext ? EXTENSION_MASK : 0) | csrc.length;
  csrc.forEach((id, i) => buf.writeUInt32BE(id >>> 0, RTP_HEADER_SIZE + i * CSRC_SIZE));
  let offset = RTP_HEADER_SIZE + csrc.length * CSRC_SIZE;
  if (ext) {
    buf.writeUInt16BE(fields.extensionProfile ?? 0, offset);
    buf.writeUInt16BE(ext.length / 4, offset + 2);
    ext.copy(buf, offset + EXTENSION_HEADER_SIZE);
    offset += EXTENSION_HEADER_SIZE + ext.length;
  }
  buf.set(payload, offset);
  if (pad > 0) buf[buf.length - 1] = pad;
  return buf;
}

/** Writes the 12-byte fixed header (no CSRC, extension or padding) at the start of `buf`. */
export function writeRtpHeader(buf: Buffer, pt: number, seq: number, ts: number, ssrc: number, marker: boolean): void {
  buf[0] = RTP_VERSION << VERSION_SHIFT;
  buf[1] = (marker ? MARKER_MASK : 0) | (pt & PT_MASK);
  buf.writeUInt16BE(seq & 0xffff, SEQ_OFFSET);
  buf.writeUInt32BE(ts >>> 0, TIMESTAMP_OFFSET);
  buf.writeUInt32BE(ssrc >>> 0, SSRC_OFFSET);
}

// Field accessors for the relay path: they read and write in place, allocating nothing.
export const rtpPayloadType = (buf: Buffer): number => buf[1]! & PT_MASK;
export const rtpMarker = (buf: Buffer): boolean => (buf[1]! & MARKER_MASK) !== 0;
export const rtpSequenceNumber = (buf: Buffer): number => (buf[2]! << 8) | buf[3]!;
export const rtpTimestamp = (buf: Buffer): number => buf.readUInt32BE(TIMESTAMP_OFFSET);
export const rtpSsrc = (buf: Buffer): number => buf.readUInt32BE(SSRC_OFFSET);

export function setRtpPayloadType(buf: Buffer, pt: number): void {
  buf[1] = (buf[1]! & MARKER_MASK) | (pt & PT_MASK);
}

export function setRtpMarker(buf: Buffer, marker: boolean): void {
  buf[1] = marker ? buf[1]! | MARKER_MASK : buf[1]! & PT_MASK;
}

/** Rewrites sequence number, timestamp and SSRC in place (the relay's per-packet write). */
export function setRtpSeqTsSsrc(buf: Buffer, seq: number, ts: number, ssrc: number): void {
  buf[2] = (seq >> 8) & 0xff;
  buf[3] = seq & 0xff;
  buf.writeUInt32BE(ts >>> 0, TIMESTAMP_OFFSET);
  buf.writeUInt32BE(ssrc >>> 0, SSRC_OFFSET);
}

/**
 * True when the datagram is RTCP rather than RTP on a multiplexed port: RFC 5761 §4 keeps RTP
 * payload types out of 64-95 so that the second octet (marker + PT) of RTCP, 192-223, is distinct.
 */
export function isRtcpPacket(buf: Buffer): boolean {
  if (buf.length < 2) return false;
  const pt = buf[1]!;
  return pt >= 192 && pt <= 223;
}
