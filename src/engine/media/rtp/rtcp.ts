/** @module RTCP sender and receiver reports with SDES CNAME (RFC 3550 §6.4, §6.5): build and parse. */
import type { ReportBlockValues } from './reception-stats.js';

/*
 * Sender report, RFC 3550 §6.4.1 (RR, §6.4.2, is the same without the sender info):
 *
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |V=2|P|    RC   |   PT=SR=200   |             length            | header
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                         SSRC of sender                        |
 * +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
 * |              NTP timestamp, most significant word             | sender
 * |             NTP timestamp, least significant word             | info
 * |                         RTP timestamp                         |
 * |                     sender's packet count                     |
 * |                      sender's octet count                     |
 * +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
 * |                 SSRC_1 (SSRC of first source)                 | report
 * | fraction lost |       cumulative number of packets lost       | block
 * |           extended highest sequence number received           |   1
 * |                      interarrival jitter                      |
 * |                         last SR (LSR)                         |
 * |                   delay since last SR (DLSR)                  |
 * +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
 *
 * `length` is the packet size in 32-bit words minus one. SDES (§6.5) follows in the same
 * compound packet: chunks of SSRC then items (type, length, text), ended by a null octet and
 * padded to a word boundary.
 */

export const RTCP_SR = 200;
export const RTCP_RR = 201;
export const RTCP_SDES = 202;
export const RTCP_BYE = 203;
const SDES_CNAME = 1;
const HEADER_SIZE = 4;
const SENDER_INFO_SIZE = 20;
const REPORT_BLOCK_SIZE = 24;
/** Seconds from 1900 (NTP epoch) to 1970 (Unix epoch). */
const NTP_UNIX_OFFSET = 2208988800;

/** What a sender report says about its own stream. */
export interface SenderInfo {
  ntpMs: number;
  rtpTimestamp: number;
  packetCount: number;
  octetCount: number;
}

/** A report block as received, plus the LSR/DLSR fields needed for round-trip time. */
export interface ReceivedReportBlock extends ReportBlockValues {
  lastSr: number;
  delaySinceLastSr: number;
}

/** One SR or RR found in a compound packet. */
export interface RtcpReport {
  packetType: typeof RTCP_SR | typeof RTCP_RR;
  ssrc: number;
  senderInfo: SenderInfo | null;
  reports: ReceivedReportBlock[];
}

/** Report block plus the LSR/DLSR the sender computes from the last SR it received. */
export interface OutgoingReportBlock extends ReportBlockValues {
  lastSr: number;
  delaySinceLastSr: number;
}

/** Everything needed to build one compound RTCP packet (RFC 3550 §6.1: report first, then SDES). */
export interface CompoundReportFields {
  ssrc: number;
  cname: string;
  /** Present when we sent RTP since the last report: then the packet is an SR. */
  senderInfo: SenderInfo | null;
  reports: OutgoingReportBlock[];
}

/** The middle 32 bits of the 64-bit NTP timestamp of `ntpMs` (RFC 3550 §6.4.1 LSR). */
export function ntpMiddle32(ntpMs: number): number {
  const seconds = Math.floor(ntpMs / 1000) + NTP_UNIX_OFFSET;
  const fraction = Math.floor(((ntpMs % 1000) / 1000) * 0x10000);
  return ((seconds & 0xffff) * 0x10000 + fraction) >>> 0;
}

/** Builds an SR or RR followed by an SDES CNAME chunk. */
export function buildCompoundReport(fields: CompoundReportFields): Buffer {
  const reports = fields.reports.slice(0, 31);
  const cname = Buffer.from(fields.cname, 'utf8').subarray(0, 255);
  const reportSize = HEADER_SIZE + 4 + (fields.senderInfo ? SENDER_INFO_SIZE : 0) + reports.length * REPORT_BLOCK_SIZE;
  // SDES chunk: SSRC, CNAME item (2 + text), at least one null octet, padded to 32 bits.
  const chunkSize = Math.ceil((4 + 2 + cname.length + 1) / 4) * 4;
  const buf = Buffer.alloc(reportSize + HEADER_SIZE + chunkSize);
  buf[0] = 0x80 | reports.length;
  buf[1] = fields.senderInfo ? RTCP_SR : RTCP_RR;
  buf.writeUInt16BE(reportSize / 4 - 1, 2);
  buf.writeUInt32BE(fields.ssrc >>> 0, 4);
  let offset = 8;
  if (fields.senderInfo) {
    const info = fields.senderInfo;
    buf.writeUInt32BE((Math.floor(info.ntpMs / 1000) + NTP_UNIX_OFFSET) >>> 0, offset);
    buf.writeUInt32BE(Math.floor(((info.ntpMs % 1000) / 1000) * 0x100000000) >>> 0, offset + 4);
    buf.writeUInt32BE(info.rtpTimestamp >>> 0, offset + 8);
    buf.writeUInt32BE(info.packetCount >>> 0, offset + 12);
    buf.writeUInt32BE(info.octetCount >>> 0, offset + 16);
    offset += SENDER_INFO_SIZE;
  }
  for (const block of reports) {
    writeReportBlock(buf, offset, block);
    offset += REPORT_BLOCK_SIZE;
  }
  buf[offset] = 0x81;
  buf[offset + 1] = RTCP_SDES;
  buf.writeUInt16BE(chunkSize / 4, offset + 2);
  buf.writeUInt32BE(fields.ssrc >>> 0, offset + 4);
  buf[offset + 8] = SDES_CNAME;
  buf[offset + 9] = cname.length;
  cname.copy(buf, offset + 10);
  return buf;
}

function writeReportBlock(buf: Buffer, offset: number, block: OutgoingReportBlock): void {
  buf.writeUInt32BE(block.ssrc >>> 0, offset);
  buf[offset + 4] = block.fractionLost & 0xff;
  // Cumulative lost is a signed 24-bit integer (RFC 3550 §6.4.1).
  buf.writeUIntBE(block.cumulativeLost & 0xffffff, offset + 5, 3);
  buf.writeUInt32BE(block.extendedHighestSeq >>> 0, offset + 8);
  buf.writeUInt32BE(block.jitter >>> 0, offset + 12);
  buf.writeUInt32BE(block.lastSr >>> 0, offset + 16);
  buf.writeUInt32BE(block.delaySinceLastSr >>> 0, offset + 20);
}

function readReportBlock(buf: Buffer, offset: number): ReceivedReportBlock {
  const lost = buf.readUIntBE(offset + 5, 3);
  return {
    ssrc: buf.readUInt32BE(offset),
    fractionLost: buf[offset + 4]!,
    cumulativeLost: lost & 0x800000 ? lost - 0x1000000 : lost,
    extendedHighestSeq: buf.readUInt32BE(offset + 8),
    jitter: buf.readUInt32BE(offset + 12),
    lastSr: buf.readUInt32BE(offset + 16),
    delaySinceLastSr: buf.readUInt32BE(offset + 20),
  };
}

/** The SR and RR packets in a compound RTCP packet; malformed packets end the walk (a value, not a throw). */
export function parseRtcpReports(buf: Buffer): RtcpReport[] {
  const out: RtcpReport[] = [];
  let offset = 0;
  while (offset + HEADER_SIZE <= buf.length) {
    if (buf[offset]! >> 6 !== 2) break;
    const count = buf[offset]! & 0x1f;
    const pt = buf[offset + 1]!;
    const size = (buf.readUInt16BE(offset + 2) + 1) * 4;
    if (offset + size > buf.length) break;
    // RFC 3550 §6.4.1: an RR holds at least its SSRC, an SR its 20 octets of sender info as well;
    // a length field that says less would make us read past the packet (a hostile peer's crash).
    if ((pt === RTCP_SR || pt === RTCP_RR) && size < 8 + (pt === RTCP_SR ? SENDER_INFO_SIZE : 0)) break;
    if (pt === RTCP_SR || pt === RTCP_RR) {
      const hasInfo = pt === RTCP_SR;
      let pos = offset + 8;
      let senderInfo: SenderInfo | null = null;
      if (hasInfo) {
        const seconds = buf.readUInt32BE(pos) - NTP_UNIX_OFFSET;
        const fraction = buf.readUInt32BE(pos + 4) / 0x100000000;
        senderInfo = {
          ntpMs: (seconds + fraction) * 1000,
          rtpTimestamp: buf.readUInt32BE(pos + 8),
          packetCount: buf.readUInt32BE(pos + 12),
          octetCount: buf.readUInt32BE(pos + 16),
        };
        pos += SENDER_INFO_SIZE;
      }
      const reports: ReceivedReportBlock[] = [];
      for (let i = 0; i < count && pos + REPORT_BLOCK_SIZE <= offset + size; i++, pos += REPORT_BLOCK_SIZE) {
        reports.push(readReportBlock(buf, pos));
      }
      out.push({ packetType: pt, ssrc: buf.readUInt32BE(offset + 4), senderInfo, reports });
    }
    offset += size;
  }
  return out;
}
