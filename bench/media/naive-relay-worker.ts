/**
 * @module Node's floor for the media benchmark: a relay with no RTP logic at all (no parsing,
 * latching, statistics or rewriting), forwarding each datagram to the other endpoint. The gap
 * between it and our relay is the media engine's own cost; the gap between it and rtpengine is
 * Node's UDP path.
 */
import type { Socket } from 'node:dgram';
import { bindUdp } from '../../src/engine/media/rtp/udp-socket.js';
import type { CallEndpoints, RelayPorts } from './protocol.js';

let nextPort = 20000;

async function bindNext(): Promise<Socket> {
  for (;;) {
    const port = nextPort;
    nextPort += 2;
    try {
      return await bindUdp('127.0.0.1', port);
    } catch {
      // Port taken by another process: try the next pair.
    }
  }
}

async function setup(calls: CallEndpoints[]): Promise<RelayPorts[]> {
  const out: RelayPorts[] = [];
  for (const call of calls) {
    const a = await bindNext();
    const b = await bindNext();
    a.on('message', (msg: Buffer) => b.send(msg, call.callee, '127.0.0.1'));
    b.on('message', (msg: Buffer) => a.send(msg, call.caller, '127.0.0.1'));
    out.push({ callerTarget: a.address().port, calleeTarget: b.address().port });
  }
  return out;
}

process.on('message', (msg: { type: 'setup'; calls: CallEndpoints[] }) => {
  if (msg.type !== 'setup') return;
  setup(msg.calls).then(
    (relay) => process.send?.({ type: 'ready', relay }),
    (err: Error) => process.send?.({ type: 'error', message: err.message }),
  );
});
process.on('SIGTERM', () => process.exit(0));
process.send?.({ type: 'started' });
