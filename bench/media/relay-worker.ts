/**
 * @module The relay under test, in its own process: bridges N calls between load-generator
 * endpoints with the product's RtpSession and MediaBridge (PCMU on both legs, passthrough).
 * Controlled over the IPC channel by bench-media.ts.
 */
import { systemClock } from '../../src/common/clock.js';
import { isPortsExhausted, MediaBridge, PortPool, RtpSession } from '../../src/engine/media/index.js';
import type { CallEndpoints, RelayPorts } from './protocol.js';

const ports = new PortPool({ min: 20000, max: 27999 });
const bridges: MediaBridge[] = [];

async function openSession(remotePort: number): Promise<RtpSession> {
  const session = await RtpSession.open({ clock: systemClock, ports, bindAddress: '127.0.0.1', mediaTimeoutMs: 0 });
  if (isPortsExhausted(session)) throw new Error('relay ran out of ports');
  session.setRemote({ address: '127.0.0.1', port: remotePort });
  return session;
}

async function setup(calls: CallEndpoints[]): Promise<RelayPorts[]> {
  const out: RelayPorts[] = [];
  for (const call of calls) {
    const a = await openSession(call.caller);
    const b = await openSession(call.callee);
    const leg = (session: RtpSession) => ({
      session, encoding: 'PCMU' as const, sendPayloadType: 0, receivePayloadType: 0, sendEventPayloadType: 101, receiveEventPayloadType: 101,
    });
    bridges.push(new MediaBridge({ clock: systemClock, a: leg(a), b: leg(b) }));
    out.push({ callerTarget: a.localPort, calleeTarget: b.localPort });
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
// Exit normally on SIGTERM so that --cpu-prof can write its profile.
process.on('SIGTERM', () => process.exit(0));
process.send?.({ type: 'started' });
