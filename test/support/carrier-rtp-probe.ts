/**
 * @module The carrier's media end for inbound calls from sipp: sipp signals (its SDP names this
 * probe's port with `-key probe_port N`) and the probe is the RTP endpoint. It plays a G.711 tone
 * to the gateway every 20 ms from the one socket it also receives on (so symmetric RTP latches to
 * it), and keeps every packet the gateway sent it with its arrival time, wherever the gateway
 * addressed it (a datagram to 0.0.0.0 reaches a loopback socket on Linux).
 */
import { createSocket, type Socket } from 'node:dgram';
import type { Test } from 'tap';
import { alawToLinear, linearToAlaw, linearToUlaw, serializeRtp, ulawToLinear } from '../../src/engine/media/index.js';

/** One RTP packet the gateway sent the carrier. */
export interface ProbePacket {
  at: number;
  payloadType: number;
  payload: Buffer;
}

export type ProbeCodec = 'PCMU' | 'PCMA';
const PAYLOAD_TYPE: Record<ProbeCodec, number> = { PCMU: 0, PCMA: 8 };

export class CarrierRtpProbe {
  readonly received: ProbePacket[] = [];
  readonly #socket: Socket;
  #timer: NodeJS.Timeout | null = null;
  #codec: ProbeCodec = 'PCMU';
  #hz = 0;
  #seq = 1;
  #sample = 0;

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.on('message', (packet) => {
      // RTCP (payload types 200-204 with the marker bit) is not audio.
      if (packet.length < 12 || (packet[1]! >= 200 && packet[1]! <= 204)) return;
      this.received.push({ at: Date.now(), payloadType: packet[1]! & 0x7f, payload: Buffer.from(packet.subarray(12 + 4 * (packet[0]! & 0x0f))) });
    });
  }

  static async open(t: Test): Promise<CarrierRtpProbe> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    const probe = new CarrierRtpProbe(socket);
    t.teardown(() => probe.close());
    return probe;
  }

  get port(): number {
    return this.#socket.address().port;
  }

  /** Plays a `hz` tone in `codec` to the gateway's port `gw`, one packet per 20 ms, until {@link stop} (a later call changes codec or tone). */
  play(gw: number, codec: ProbeCodec, hz: number): void {
    this.#codec = codec;
    this.#hz = hz;
    if (this.#timer) return;
    const ssrc = 0x4a11ca11;
    this.#timer = setInterval(() => {
      const payload = Buffer.alloc(160);
      for (let i = 0; i < 160; i++, this.#sample++) {
        const linear = Math.round(8000 * Math.sin((2 * Math.PI * this.#hz * this.#sample) / 8000));
        payload[i] = this.#codec === 'PCMU' ? linearToUlaw(linear) : linearToAlaw(linear);
      }
      const packet = serializeRtp({ payloadType: PAYLOAD_TYPE[this.#codec], sequenceNumber: this.#seq++ & 0xffff, timestamp: this.#sample, ssrc, marker: false }, payload);
      this.#socket.send(packet, gw, '127.0.0.1');
    }, 20);
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }

  /** Packets received from index `from` on, optionally only those before `until` (ms since the epoch). */
  since(from: number, until = Infinity): ProbePacket[] {
    return this.received.slice(from).filter((p) => p.at < until);
  }

  close(): void {
    this.stop();
    this.#socket.close();
  }
}

/** The audio of `packets` as µ-law, whatever G.711 law each came in (for toneLevel). */
export function asMulaw(packets: readonly ProbePacket[]): Buffer {
  return Buffer.concat(packets.map((p) => (p.payloadType === 8 ? Buffer.from(p.payload.map((b) => linearToUlaw(alawToLinear(b)))) : p.payload)));
}

/** Loudest sample of µ-law audio, linear. */
export const mulawPeak = (mulaw: Buffer): number => mulaw.reduce((max, b) => Math.max(max, Math.abs(ulawToLinear(b))), 0);
