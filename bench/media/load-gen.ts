/**
 * @module Load generator for the media benchmark, in its own process: two endpoints per call, each
 * sending 172-byte PCMU packets (12-byte RTP header + 160 bytes) at 50 packets/s through the relay
 * to the other endpoint, phases spread evenly over the 20 ms period. The first payload bytes
 * carry the send time, taken just before the packet is handed to the kernel, and the receiving
 * endpoint's kernel stamps its arrival (SO_TIMESTAMPNS, through the media I/O addon), so the
 * one-way latency through the relay leaves out how late the generator itself reads.
 */
import type { MediaSocket } from '../../src/engine/media/rtp/media-socket.js';
import { nativeMediaIo } from '../../src/engine/media/rtp/native-udp.js';
import type { CallEndpoints, RelayPorts, WindowResult } from './protocol.js';

const PTIME_MS = 20;
const PACKET_SIZE = 172;
/** Latency histogram: 10 µs buckets up to 1 s. */
const BUCKET_MS = 0.01;
const BUCKETS = 100_000;

const io = nativeMediaIo({ receiveTimestamps: true });
if (io === null) throw new Error('load generator: the media I/O addon is not built (npm run build:native)');

interface Stream {
  socket: MediaSocket;
  target: number;
  phaseMs: number;
  seq: number;
  ssrc: number;
}

const streams: Stream[] = [];
const histogram = new Uint32Array(BUCKETS + 1);
let windowStart = Infinity;
let windowEnd = Infinity;
let sentInWindow = 0;
let receivedInWindow = 0;
let skippedInWindow = 0;
let maxLatency = 0;
let running = false;

function onPacket(msg: Buffer, _address: string, _port: number, receivedAt?: number): void {
  if (msg.length < 20) return;
  const sentAt = msg.readDoubleLE(12);
  if (sentAt < windowStart || sentAt >= windowEnd) return;
  const latency = (receivedAt ?? performance.now()) - sentAt;
  receivedInWindow++;
  if (latency > maxLatency) maxLatency = latency;
  histogram[Math.min(BUCKETS, Math.floor(latency / BUCKET_MS))]!++;
}

function open(calls: number): CallEndpoints[] {
  const out: CallEndpoints[] = [];
  for (let i = 0; i < calls; i++) {
    const caller = io!.open('127.0.0.1', 0);
    const callee = io!.open('127.0.0.1', 0);
    for (const s of [caller, callee]) s.onDatagram = onPacket;
    out.push({ caller: caller.port, callee: callee.port });
    streams.push({ socket: caller, target: 0, phaseMs: 0, seq: 0, ssrc: 2 * i + 1 });
    streams.push({ socket: callee, target: 0, phaseMs: 0, seq: 0, ssrc: 2 * i + 2 });
  }
  return out;
}

function send(stream: Stream): void {
  const packet = Buffer.allocUnsafe(PACKET_SIZE);
  packet[0] = 0x80;
  packet[1] = 0;
  packet.writeUInt16BE(stream.seq & 0xffff, 2);
  packet.writeUInt32BE((stream.seq * 160) >>> 0, 4);
  packet.writeUInt32BE(stream.ssrc, 8);
  packet.fill(0xff, 12);
  stream.seq++;
  // The send time itself, not the tick's: a tick may send a run of packets.
  const sentAt = performance.now();
  if (sentAt >= windowStart && sentAt < windowEnd) sentInWindow++;
  packet.writeDoubleLE(sentAt, 12);
  stream.socket.send(packet, stream.target, '127.0.0.1');
}

/** Sends every packet whose absolute deadline has passed, then sleeps until the next one. */
function start(relay: RelayPorts[]): void {
  relay.forEach((r, i) => {
    streams[2 * i]!.target = r.callerTarget;
    streams[2 * i + 1]!.target = r.calleeTarget;
  });
  streams.forEach((s, i) => (s.phaseMs = (i * PTIME_MS) / streams.length));
  const t0 = performance.now();
  let round = 0;
  let k = 0;
  running = true;
  const tick = (): void => {
    if (!running) return;
    const now = performance.now();
    while (t0 + round * PTIME_MS + streams[k]!.phaseMs <= now) {
      // A real phone does not burst to catch up after a stall; a packet more than one period
      // late is skipped (the receiver sees loss), so the offered load never exceeds 50 pps.
      if (now - (t0 + round * PTIME_MS + streams[k]!.phaseMs) <= PTIME_MS) send(streams[k]!);
      else if (now >= windowStart && now < windowEnd) skippedInWindow++;
      if (++k === streams.length) {
        k = 0;
        round++;
      }
    }
    setTimeout(tick, Math.max(0, t0 + round * PTIME_MS + streams[k]!.phaseMs - performance.now()));
  };
  tick();
}

function percentile(p: number, total: number): number {
  let seen = 0;
  for (let i = 0; i <= BUCKETS; i++) {
    seen += histogram[i]!;
    if (seen >= total * p) return (i + 0.5) * BUCKET_MS;
  }
  return BUCKETS * BUCKET_MS;
}

function report(): WindowResult {
  return {
    sent: sentInWindow,
    received: receivedInWindow,
    skipped: skippedInWindow,
    p50: percentile(0.5, receivedInWindow),
    p99: percentile(0.99, receivedInWindow),
    max: maxLatency,
    windowMs: windowEnd - windowStart,
  };
}

type Command = { type: 'open'; calls: number } | { type: 'start'; relay: RelayPorts[] } | { type: 'window'; ms: number } | { type: 'stop' };

process.on('message', (msg: Command) => {
  switch (msg.type) {
    case 'open':
      try {
        process.send?.({ type: 'endpoints', endpoints: open(msg.calls) });
      } catch (err) {
        process.send?.({ type: 'error', message: (err as Error).message });
      }
      break;
    case 'start':
      start(msg.relay);
      process.send?.({ type: 'started' });
      break;
    case 'window':
      windowStart = performance.now();
      windowEnd = windowStart + msg.ms;
      // Packets sent at the end of the window get 500 ms to arrive before the count is taken.
      setTimeout(() => process.send?.({ type: 'result', result: report() }), msg.ms + 500);
      break;
    case 'stop':
      running = false;
      for (const s of streams) s.socket.close();
      process.disconnect?.();
      break;
  }
});
process.send?.({ type: 'ready' });
