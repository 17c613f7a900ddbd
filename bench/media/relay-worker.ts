/**
 * @module The relay under test, in its own process: bridges N calls between load-generator
 * endpoints with the product's RtpSession and MediaBridge (PCMU on both legs, passthrough).
 * Controlled over the IPC channel by bench-media.ts.
 */
import type * as ClockModule from '../../src/common/clock.js';
import type * as MediaModule from '../../src/engine/media/index.js';
import type { MediaBridge, MediaIoChoice, RtpSession } from '../../src/engine/media/index.js';
import { compiled } from '../compiled.js';
import type { CallEndpoints, RelayPorts } from './protocol.js';

// The build, as `npm start` runs it (bench/compiled.ts); bench-media.ts built it before forking.
const { systemClock } = await compiled<typeof ClockModule>('common/clock.js');
const { isPortsExhausted, MediaBridge: Bridge, PortPool, relayThreadPriorityOutcome, RtpSession: Session, useMediaIo } = await compiled<typeof MediaModule>('engine/media/index.js');

// BENCH_MEDIA_IO: native (the batched I/O addon, as the gateway runs by default on Linux) or dgram;
// BENCH_RELAY_THREAD=0: the addon without its relay thread (rtp.relay_thread false);
// BENCH_RELAY_PRIORITY=N: the relay thread in SCHED_RR at N (rtp.relay_thread_priority).
const mediaIo = (process.env.BENCH_MEDIA_IO ?? 'native') as MediaIoChoice;
const relayThreadPriority = Number(process.env.BENCH_RELAY_PRIORITY ?? 0);
if (useMediaIo(mediaIo, { relayThread: process.env.BENCH_RELAY_THREAD !== '0', relayThreadPriority }) !== mediaIo) throw new Error(`relay: media I/O ${mediaIo} is not available (npm run build:native)`);
const outcome = relayThreadPriorityOutcome();
// A refused priority would measure the time-sharing relay under the real-time name.
if (outcome !== null && outcome !== 'granted') throw new Error(`relay: the kernel refused SCHED_RR ${relayThreadPriority} (${outcome})`);

const ports = new PortPool({ min: 20000, max: 27999 });
const bridges: MediaBridge[] = [];
const sessions: RtpSession[] = [];

async function openSession(remotePort: number): Promise<RtpSession> {
  // BENCH_RTCP_MS=0 turns RTCP reports off, to isolate their cost.
  const rtcpIntervalMs = Number(process.env.BENCH_RTCP_MS ?? 5000);
  // BENCH_MUX_ONLY=1 binds no separate RTCP socket per session.
  const muxOnly = process.env.BENCH_MUX_ONLY === '1';
  const session = await Session.open({ clock: systemClock, ports, bindAddress: '127.0.0.1', mediaTimeoutMs: 0, rtcpIntervalMs, muxOnly });
  if (isPortsExhausted(session)) throw new Error('relay ran out of ports');
  session.setRemote({ address: '127.0.0.1', port: remotePort });
  return session;
}

async function setup(calls: CallEndpoints[]): Promise<RelayPorts[]> {
  const out: RelayPorts[] = [];
  for (const call of calls) {
    const a = await openSession(call.caller);
    const b = await openSession(call.callee);
    sessions.push(a, b);
    const leg = (session: RtpSession) => ({
      session, encoding: 'PCMU' as const, sendPayloadType: 0, receivePayloadType: 0, sendEventPayloadType: 101, receiveEventPayloadType: 101,
    });
    bridges.push(new Bridge({ clock: systemClock, a: leg(a), b: leg(b) }));
    out.push({ callerTarget: a.localPort, calleeTarget: b.localPort });
  }
  return out;
}

/** Sums of the per-leg counters, so the orchestrator can tell relay loss from generator loss. */
function totals(): Record<string, number> {
  // relayed: packets the media I/O relayed itself (RtpSession.relayTo), never seen by the bridge.
  const sum: Record<string, number> = { received: 0, sent: 0, rejected: 0, dropped: 0, relayed: 0 };
  for (const session of sessions) sum.relayed! += session.relayedPackets;
  for (const bridge of bridges) {
    for (const leg of Object.values(bridge.stats())) {
      sum.received! += leg.packetsReceived;
      sum.sent! += leg.packetsSent;
      sum.rejected! += leg.packetsRejected;
      sum.dropped! += leg.packetsDropped;
    }
  }
  return sum;
}

process.on('message', (msg: { type: 'setup'; calls: CallEndpoints[] } | { type: 'stats' }) => {
  if (msg.type === 'stats') {
    process.send?.({ type: 'stats', totals: totals() });
    return;
  }
  setup(msg.calls).then(
    (relay) => process.send?.({ type: 'ready', relay }),
    (err: Error) => process.send?.({ type: 'error', message: err.message }),
  );
});
// BENCH_LOOP_BUSY_MS=N: the event loop also runs N ms of JavaScript every 20 ms, standing in for
// what shares it in the gateway (the API, SIP, agent audio, garbage collection).
const busyMs = Number(process.env.BENCH_LOOP_BUSY_MS ?? 0);
if (busyMs > 0) {
  setInterval(() => {
    const until = performance.now() + busyMs;
    while (performance.now() < until);
  }, 20);
}
// Exit normally on SIGTERM so that --cpu-prof can write its profile.
process.on('SIGTERM', () => process.exit(0));
process.send?.({ type: 'started' });
