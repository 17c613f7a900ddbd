/**
 * @module A loopback RTP endpoint for tests: sends packets to a session and records what comes
 * back, plus helpers to wait for traffic without timing assertions.
 */
import { createSocket, type Socket } from 'node:dgram';
import { FakeClock } from '../../src/common/clock.js';
import { serializeRtp, type RtpPacketFields } from '../../src/engine/media/rtp/packet.js';
import { isPortsExhausted, PortPool } from '../../src/engine/media/rtp/port-pool.js';
import { RtpSession, type RtpSessionOptions } from '../../src/engine/media/rtp/rtp-session.js';

/** A received datagram with its source. */
export interface ReceivedDatagram {
  data: Buffer;
  address: string;
  port: number;
}

/** A UDP socket on loopback (127.0.0.1 unless another 127.x address stands for another host) that records every datagram it receives. */
export class RtpPeer {
  readonly socket: Socket;
  readonly received: ReceivedDatagram[] = [];
  #waiters: { count: number; resolve: () => void }[] = [];

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.on('message', (data, rinfo) => {
      this.received.push({ data, address: rinfo.address, port: rinfo.port });
      this.#waiters = this.#waiters.filter((w) => (this.received.length >= w.count ? (w.resolve(), false) : true));
    });
  }

  static async open(t: { teardown(fn: () => void): void }, host = '127.0.0.1'): Promise<RtpPeer> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, host, resolve));
    t.teardown(() => socket.close());
    return new RtpPeer(socket);
  }

  get port(): number {
    return this.socket.address().port;
  }

  get host(): string {
    return this.socket.address().address;
  }

  /** Sends one RTP packet built from `fields` and `payload` to `port` on 127.0.0.1. */
  sendRtp(port: number, fields: RtpPacketFields, payload: Uint8Array): Promise<void> {
    return this.sendRaw(port, serializeRtp(fields, payload));
  }

  sendRaw(port: number, data: Buffer): Promise<void> {
    return new Promise((resolve, reject) => this.socket.send(data, port, '127.0.0.1', (err) => (err ? reject(err) : resolve())));
  }

  /** Resolves once `count` datagrams in total have arrived; rejects after `ms` (a hang guard, not a timing check). */
  waitFor(count: number, ms = 5000): Promise<void> {
    if (this.received.length >= count) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`received ${this.received.length} of ${count} datagrams`)), ms);
      this.#waiters.push({ count, resolve: () => (clearTimeout(timer), resolve()) });
    });
  }
}

/**
 * A port pool on a random range unlikely to collide with parallel test files (sessions skip busy
 * ports anyway), above the 20000-31999 the media benchmark's relays use.
 */
export function testPortPool(size = 200): PortPool {
  const base = 40000 + 2 * Math.floor(Math.random() * 9000);
  return new PortPool({ min: base, max: base + size - 1 });
}

/** An RtpSession on 127.0.0.1 with a fake clock and no RTCP unless `options` say otherwise, closed at teardown. */
export async function openTestSession(t: { teardown(fn: () => void): void }, options: Partial<RtpSessionOptions> = {}): Promise<RtpSession> {
  const session = await RtpSession.open({ clock: new FakeClock(), ports: testPortPool(), bindAddress: '127.0.0.1', rtcpIntervalMs: 0, ...options });
  if (isPortsExhausted(session)) throw new Error('no ports');
  t.teardown(() => session.close());
  return session;
}

/** Lets pending socket I/O run (a few event-loop turns), for asserting that nothing arrived. */
export function settle(ms = 50): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
