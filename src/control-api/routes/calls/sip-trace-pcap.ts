/**
 * @module A call's SIP trace as a pcap file (docs/API.md "SIP trace of a call") that Wireshark,
 * tshark and sngrep open: the classic libpcap format (microsecond timestamps) with LINKTYPE_RAW
 * (101: each packet starts with its IPv4 or IPv6 header), and each message framed as one UDP
 * datagram, or one TCP segment of its connection's byte stream (TCP and TLS alike: the trace
 * holds TLS messages decrypted, so they are shown as plain SIP over TCP). Checksums are left 0
 * ("not computed") except the IPv4 header's.
 */
import { isIPv4 } from 'node:net';
import type { SipTraceMessage } from '../../../storage/index.js';

const LINKTYPE_RAW = 101;
const SNAPLEN = 262_144;

/** `address:port` or `[v6]:port` as the trace writes them. */
function parseEndpoint(text: string): { address: string; port: number } {
  const match = /^\[?([^\]]+?)\]?:(\d+)$/.exec(text);
  return match ? { address: match[1]!, port: Number(match[2]) } : { address: '0.0.0.0', port: 0 };
}

function ipv4Bytes(address: string): number[] {
  return address.split('.').map((x) => Number(x) & 0xff);
}

/** RFC 4291 §2.2 text form to 16 octets (`::` expanded; an embedded IPv4 tail read as two groups). */
function ipv6Bytes(address: string): number[] {
  let text = address.split('%')[0]!;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const b = ipv4Bytes(v4[1]!);
    text = `${text.slice(0, -v4[1]!.length)}${((b[0]! << 8) | b[1]!).toString(16)}:${((b[2]! << 8) | b[3]!).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const groups = (s: string | undefined): string[] => (s ? s.split(':').filter((g) => g !== '') : []);
  const left = groups(head);
  const right = groups(tail);
  const all = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return all.flatMap((g) => [(parseInt(g, 16) >> 8) & 0xff, parseInt(g, 16) & 0xff]);
}

/** RFC 791 §3.1 header checksum: the ones' complement of the ones' complement sum of its 16-bit words. */
function ipv4Checksum(header: Buffer): number {
  let sum = 0;
  for (let i = 0; i < header.length; i += 2) sum += header.readUInt16BE(i);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}

function ipHeader(src: string, dst: string, protocol: number, payloadLength: number): Buffer {
  if (isIPv4(src) && isIPv4(dst)) {
    const h = Buffer.alloc(20);
    h[0] = 0x45;
    h.writeUInt16BE(20 + payloadLength, 2);
    h[8] = 64;
    h[9] = protocol;
    Buffer.from(ipv4Bytes(src)).copy(h, 12);
    Buffer.from(ipv4Bytes(dst)).copy(h, 16);
    h.writeUInt16BE(ipv4Checksum(h), 10);
    return h;
  }
  const h = Buffer.alloc(40);
  h[0] = 0x60;
  h.writeUInt16BE(payloadLength, 4);
  h[6] = protocol;
  h[7] = 64;
  Buffer.from(ipv6Bytes(src.includes(':') ? src : `::ffff:${src}`)).copy(h, 8);
  Buffer.from(ipv6Bytes(dst.includes(':') ? dst : `::ffff:${dst}`)).copy(h, 24);
  return h;
}

/** Builds the pcap file of `messages`, in their order. */
export function sipTracePcap(messages: readonly SipTraceMessage[]): Buffer {
  const header = Buffer.alloc(24);
  header.writeUInt32LE(0xa1b2c3d4, 0);
  header.writeUInt16LE(2, 4);
  header.writeUInt16LE(4, 6);
  header.writeUInt32LE(SNAPLEN, 16);
  header.writeUInt32LE(LINKTYPE_RAW, 20);
  const parts: Buffer[] = [header];
  // Each TCP direction's next sequence number, so a stream's segments follow one another.
  const sequence = new Map<string, number>();
  for (const m of messages) {
    const src = parseEndpoint(m.source);
    const dst = parseEndpoint(m.destination);
    const payload = Buffer.from(m.text, 'utf8');
    let transport: Buffer;
    if (m.transport === 'UDP') {
      transport = Buffer.alloc(8);
      transport.writeUInt16BE(src.port, 0);
      transport.writeUInt16BE(dst.port, 2);
      transport.writeUInt16BE(8 + payload.length, 4);
    } else {
      const flow = `${m.source}>${m.destination}`;
      const seq = sequence.get(flow) ?? 1;
      sequence.set(flow, (seq + payload.length) >>> 0);
      transport = Buffer.alloc(20);
      transport.writeUInt16BE(src.port, 0);
      transport.writeUInt16BE(dst.port, 2);
      transport.writeUInt32BE(seq >>> 0, 4);
      transport.writeUInt32BE(sequence.get(`${m.destination}>${m.source}`) ?? 1, 8);
      transport[12] = 5 << 4;
      transport[13] = 0x18; // PSH, ACK
      transport.writeUInt16BE(65_535, 14);
    }
    const ip = ipHeader(src.address, dst.address, m.transport === 'UDP' ? 17 : 6, transport.length + payload.length);
    const record = Buffer.alloc(16);
    const ms = Date.parse(m.at);
    record.writeUInt32LE(Math.floor(ms / 1000), 0);
    record.writeUInt32LE((ms % 1000) * 1000, 4);
    const length = ip.length + transport.length + payload.length;
    record.writeUInt32LE(length, 8);
    record.writeUInt32LE(length, 12);
    parts.push(record, ip, transport, payload);
  }
  return Buffer.concat(parts);
}
