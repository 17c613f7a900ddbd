/**
 * @module The anchor of the media_bridge benchmark: N pairs of plain UDP sockets on loopback in
 * this process, each sending a 172-byte packet every 20 ms that the other end echoes back. It is
 * the floor any gateway in Node pays for the kernel crossings and the event loop under the same
 * packet load.
 */
import { createSocket, type Socket } from 'node:dgram';
import { FramePacer } from '../../src/engine/media/index.js';
import { systemClock } from '../../src/common/clock.js';
import type { AnchorSamples } from './samples.js';

const PACKET_BYTES = 172;

interface Pair {
  a: Socket;
  b: Socket;
  pacer: FramePacer;
  sentAt: Float64Array;
}

async function bound(): Promise<Socket> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return socket;
}

/** Runs N echo pairs for `seconds`, starting them spread over one 20 ms period; samples after `warmupS`. */
export async function runUdpAnchor(pairs: number, seconds: number, warmupS: number): Promise<AnchorSamples> {
  const samples: AnchorSamples = { oneWay: [], roundTrip: [] };
  const started = performance.now();
  const counting = (): boolean => performance.now() - started >= warmupS * 1000;
  const open: Pair[] = [];
  for (let i = 0; i < pairs; i++) {
    const a = await bound();
    const b = await bound();
    const sentAt = new Float64Array(65536);
    const bPort = b.address().port;
    const aPort = a.address().port;
    b.on('message', (msg) => {
      if (counting()) samples.oneWay.push(performance.now() - sentAt[msg.readUInt16BE(2)]!);
      b.send(msg, aPort, '127.0.0.1');
    });
    a.on('message', (msg) => {
      if (counting()) samples.roundTrip.push(performance.now() - sentAt[msg.readUInt16BE(2)]!);
    });
    const pacer = new FramePacer(systemClock, 20, (frame) => {
      const packet = Buffer.alloc(PACKET_BYTES);
      packet[0] = 0x80;
      packet.writeUInt16BE(frame & 0xffff, 2);
      sentAt[frame & 0xffff] = performance.now();
      a.send(packet, bPort, '127.0.0.1');
    });
    open.push({ a, b, pacer, sentAt });
  }
  const timers = open.map((pair, i) => setTimeout(() => pair.pacer.start(), (i * 20) / pairs));
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  timers.forEach(clearTimeout);
  for (const pair of open) {
    pair.pacer.stop();
    pair.a.close();
    pair.b.close();
  }
  return samples;
}
