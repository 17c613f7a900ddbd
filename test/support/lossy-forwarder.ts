/**
 * @module A UDP forwarder on loopback between a phone and the gateway that spoils one direction:
 * it drops every `dropEvery`-th datagram from the phone and holds every other one back by
 * `delayMs` (alternately 0 and `delayMs`), so the receiver sees a known loss and an interarrival
 * jitter (RFC 3550 A.8) of about `delayMs`. The other direction passes untouched.
 */
import { createSocket, type Socket } from 'node:dgram';

export interface LossyForwarder {
  port: number;
  /** The gateway's RTP port, once its answer names it: nothing goes there before. */
  gatewayPort: number;
  /** Datagrams from the phone dropped, and forwarded, so far. */
  dropped: number;
  forwarded: number;
  close(): void;
}

export async function startLossyForwarder(o: { phonePort: number; dropEvery: number; delayMs: number }): Promise<LossyForwarder> {
  const socket: Socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const state: LossyForwarder = { port: socket.address().port, gatewayPort: 0, dropped: 0, forwarded: 0, close: () => socket.close() };
  let fromPhone = 0;
  socket.on('message', (datagram, rinfo) => {
    if (rinfo.port !== o.phonePort) {
      socket.send(datagram, o.phonePort, '127.0.0.1');
      return;
    }
    if (state.gatewayPort === 0) return;
    fromPhone += 1;
    // RTCP (payload types 200-204 in the second octet) passes: only the media is spoiled.
    const rtcp = datagram.length > 1 && datagram[1]! >= 200 && datagram[1]! <= 204;
    if (!rtcp && fromPhone % o.dropEvery === 0) {
      state.dropped += 1;
      return;
    }
    state.forwarded += 1;
    const delay = !rtcp && fromPhone % 2 === 0 ? o.delayMs : 0;
    if (delay === 0) socket.send(datagram, state.gatewayPort, '127.0.0.1');
    else setTimeout(() => socket.send(datagram, state.gatewayPort, '127.0.0.1'), delay);
  });
  return state;
}
