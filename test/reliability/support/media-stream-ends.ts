/**
 * @module The two ends of a legitimate RTP stream for reliability runs: the sender numbers each
 * packet inside its payload, the receiver checks every tagged packet arrives once, in order, with
 * its payload bytes intact, and counts what else arrived. Nothing is kept per packet, so millions
 * of packets cost no memory.
 */
import { createSocket, type Socket } from 'node:dgram';
import { isRtcpPacket, rtpPayloadOffset, rtpSequenceNumber, serializeRtp } from '../../../src/engine/media/index.js';

const TAG = Buffer.from('VGW-LEGIT');
const PAYLOAD_SIZE = 160;

/** The 20 ms µ-law payload of legitimate packet `index`: the tag, the index, then bytes derived from it. */
export function legitPayload(index: number): Buffer {
  const payload = Buffer.alloc(PAYLOAD_SIZE);
  TAG.copy(payload, 0);
  payload.writeUInt32BE(index >>> 0, TAG.length);
  for (let i = TAG.length + 4; i < PAYLOAD_SIZE; i++) payload[i] = (index * 7 + i * 13) & 0xff;
  return payload;
}

/** A UDP socket on loopback (127.0.0.1 unless another 127.x address stands for another host) at one end of the stream. */
export class StreamEnd {
  readonly socket: Socket;
  /** Index of the next legitimate packet expected. */
  legitReceived = 0;
  /** Legitimate packets out of order, repeated, or with altered payload bytes. */
  legitDamaged = 0;
  /** RTP datagrams without the legitimate tag (hostile packets the rules let through, or the gateway's own stream). */
  otherReceived = 0;
  /** RTCP datagrams (RFC 5761 §4 tells them apart), counted apart from the media. */
  rtcpReceived = 0;
  /**
   * Back-to-back legitimate packets whose RTP sequence numbers did not step by one. Packets the
   * latched peer itself sent between them (hostile but indistinguishable from its media) may
   * carry jumps of their own, so only legitimate neighbours are compared.
   */
  sequenceBreaks = 0;
  #lastLegitSeq = -1;
  #waiter: { count: number; resolve: () => void } | null = null;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.on('message', (data) => this.#onDatagram(data));
  }

  static async open(t: { teardown(fn: () => void): void }, host = '127.0.0.1'): Promise<StreamEnd> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, host, resolve));
    const end = new StreamEnd(socket);
    t.teardown(() => end.close());
    return end;
  }

  get port(): number {
    return this.socket.address().port;
  }

  /** Sends legitimate packet `index` (PCMU) with `ssrc` to `port`; the timestamp steps 20 ms per packet unless given. */
  sendLegit(port: number, index: number, ssrc: number, timestamp = index * 160): Promise<void> {
    const packet = serializeRtp({ payloadType: 0, sequenceNumber: index & 0xffff, timestamp: timestamp >>> 0, ssrc }, legitPayload(index));
    return this.sendRaw(port, packet);
  }

  sendRaw(port: number, data: Buffer): Promise<void> {
    return new Promise((resolve, reject) => this.socket.send(data, port, '127.0.0.1', (err) => (err ? reject(err) : resolve())));
  }

  /** Resolves once `count` legitimate packets arrived; rejects after `ms` (a hang guard, not a timing check). */
  waitForLegit(count: number, ms = 10_000): Promise<void> {
    if (this.legitReceived >= count) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiter = null;
        reject(new Error(`legitimate packets: ${this.legitReceived} of ${count} arrived`));
      }, ms);
      this.#waiter = { count, resolve: () => { clearTimeout(timer); resolve(); } };
    });
  }

  close(): void {
    try {
      this.socket.close();
    } catch {
      // already closed
    }
  }

  #onDatagram(data: Buffer): void {
    if (isRtcpPacket(data)) {
      this.rtcpReceived++;
      return;
    }
    const offset = rtpPayloadOffset(data);
    const payload = offset < 0 ? null : data.subarray(offset);
    if (payload === null || payload.length !== PAYLOAD_SIZE || !payload.subarray(0, TAG.length).equals(TAG)) {
      this.otherReceived++;
      this.#lastLegitSeq = -1;
      return;
    }
    const seq = rtpSequenceNumber(data);
    if (this.#lastLegitSeq >= 0 && seq !== ((this.#lastLegitSeq + 1) & 0xffff)) this.sequenceBreaks++;
    this.#lastLegitSeq = seq;
    const index = payload.readUInt32BE(TAG.length);
    if (index !== this.legitReceived || !payload.equals(legitPayload(index))) this.legitDamaged++;
    else this.legitReceived++;
    const waiter = this.#waiter;
    if (waiter !== null && this.legitReceived >= waiter.count) {
      this.#waiter = null;
      waiter.resolve();
    }
  }
}
