/**
 * @module HEP3 export of every SIP message to a Homer collector (`observability.hep`, docs/API.md
 * "SIP trace of a call"): one UDP datagram per message, in the HEP version 3 encapsulation
 * (sipcapture HEP3 specification: "HEP3", total length, then chunks of vendor id, type id, length
 * and value; generic chunks of vendor 0). Masked as the stored trace is. Best effort, as HEP over
 * UDP is: a send that fails is counted by the caller and forgotten.
 */
import { createSocket, type Socket } from 'node:dgram';
import { isIPv4, isIPv6 } from 'node:net';
import type { SipTraceEvent } from '../../engine/sip/index.js';
import { maskSipMessage } from './sip-trace-masking.js';

/** HEP3 generic chunk types (vendor 0). */
export const HEP_CHUNK = {
  ipFamily: 1, ipProtocol: 2, srcIp4: 3, dstIp4: 4, srcIp6: 5, dstIp6: 6, srcPort: 7, dstPort: 8,
  timeSeconds: 9, timeMicros: 10, protocolType: 11, captureId: 12, payload: 15,
} as const;
const AF_INET = 2;
const AF_INET6 = 10;
const PROTOCOL_SIP = 1;

function chunk(type: number, value: Buffer): Buffer {
  const header = Buffer.alloc(6);
  header.writeUInt16BE(0, 0);
  header.writeUInt16BE(type, 2);
  header.writeUInt16BE(6 + value.length, 4);
  return Buffer.concat([header, value]);
}

const u8 = (n: number): Buffer => Buffer.from([n & 0xff]);
const u16 = (n: number): Buffer => { const b = Buffer.alloc(2); b.writeUInt16BE(n); return b; };
const u32 = (n: number): Buffer => { const b = Buffer.alloc(4); b.writeUInt32BE(n >>> 0); return b; };

function ipBytes(address: string): Buffer {
  if (isIPv4(address)) return Buffer.from(address.split('.').map(Number));
  // Node's own parser, through a socket-free route: the expanded form from URL's host canonicalisation.
  const expanded = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  const [head, tail] = expanded.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return Buffer.concat(groups.map((g) => u16(parseInt(g, 16))));
}

/** The HEP3 packet of one traced SIP message. */
export function hep3Packet(event: SipTraceEvent, captureId: number, text: string): Buffer {
  const v6 = isIPv6(event.source.address) || isIPv6(event.destination.address);
  const chunks = [
    chunk(HEP_CHUNK.ipFamily, u8(v6 ? AF_INET6 : AF_INET)),
    chunk(HEP_CHUNK.ipProtocol, u8(event.protocol === 'UDP' ? 17 : 6)),
    chunk(v6 ? HEP_CHUNK.srcIp6 : HEP_CHUNK.srcIp4, ipBytes(event.source.address)),
    chunk(v6 ? HEP_CHUNK.dstIp6 : HEP_CHUNK.dstIp4, ipBytes(event.destination.address)),
    chunk(HEP_CHUNK.srcPort, u16(event.source.port)),
    chunk(HEP_CHUNK.dstPort, u16(event.destination.port)),
    chunk(HEP_CHUNK.timeSeconds, u32(Math.floor(event.at / 1000))),
    chunk(HEP_CHUNK.timeMicros, u32((event.at % 1000) * 1000)),
    chunk(HEP_CHUNK.protocolType, u8(PROTOCOL_SIP)),
    chunk(HEP_CHUNK.captureId, u32(captureId)),
    chunk(HEP_CHUNK.payload, Buffer.from(text, 'utf8')),
  ];
  const body = Buffer.concat(chunks);
  const header = Buffer.alloc(6);
  header.write('HEP3', 0, 'latin1');
  header.writeUInt16BE(6 + body.length, 4);
  return Buffer.concat([header, body]);
}

export class HepExporter {
  readonly #socket: Socket;
  readonly #o: { host: string; port: number; id: number; onFailure(): void };

  constructor(options: { host: string; port: number; id: number; onFailure(): void }) {
    this.#o = options;
    this.#socket = createSocket(isIPv6(options.host) ? 'udp6' : 'udp4');
    this.#socket.on('error', () => options.onFailure());
    this.#socket.unref();
  }

  message(event: SipTraceEvent): void {
    const packet = hep3Packet(event, this.#o.id, maskSipMessage(event.data.toString('utf8')));
    this.#socket.send(packet, this.#o.port, this.#o.host, (err) => { if (err) this.#o.onFailure(); });
  }

  close(): void {
    this.#socket.close();
  }
}
