/**
 * @module How the gateway should hand a JSON message to ws, measured: as a string, or as the
 * string's UTF-8 bytes with `binary: false`. A client masks every frame (RFC 6455 §5.3). Given a
 * string, ws converts and masks it in a copy and writes that beside a separate header (cork, then
 * writev with two buffers); given a Buffer it masks into the frame it allocates and makes one write.
 *
 * One process holds 150 client sockets, as the gateway does at 150 agent calls, and sends each a
 * `media` message of the agent protocol every 20 ms to a ws server in a child process; the figure
 * is the sending process's CPU (user + system) per message over 15 s, after 3 s of warm-up. The
 * two ways alternate, 5 runs each; medians are printed. Run: `npx tsx bench/calls/ws-text-frames.ts`.
 */
import { fork } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { FRAME_BYTES, FRAME_MS } from './protocol.js';

const SOCKETS = 150;
const WARM_UP_MS = 3_000;
const WINDOW_MS = 15_000;
const RUNS = 5;
type Way = 'string' | 'buffer';

function serve(): void {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false });
  wss.on('connection', (socket) => socket.on('message', () => undefined));
  wss.on('listening', () => process.send?.({ port: (wss.address() as AddressInfo).port }));
  process.on('disconnect', () => process.exit(0));
}

/** µs of this process's CPU per message sent, one way, one run. */
async function run(way: Way): Promise<number> {
  const server = fork(import.meta.filename, ['--serve'], { execArgv: process.execArgv });
  const port = await new Promise<number>((resolve) => server.once('message', (m: { port: number }) => resolve(m.port)));
  const sockets: WebSocket[] = [];
  for (let i = 0; i < SOCKETS; i++) {
    const socket = new WebSocket(`ws://127.0.0.1:${port}`, { perMessageDeflate: false });
    await new Promise((resolve) => socket.once('open', resolve));
    sockets.push(socket);
  }
  const payload = Buffer.alloc(FRAME_BYTES, 0x55).toString('base64');
  let sequence = 0;
  let frames = 0;
  const sendFrame = (): void => {
    for (const socket of sockets) {
      sequence++;
      const json = JSON.stringify({
        event: 'media', streamSid: 'MZ0123456789abcdef0123456789abcdef', sequenceNumber: String(sequence),
        media: { track: 'inbound', chunk: String(sequence), timestamp: String(sequence * FRAME_MS), payload },
      });
      socket.send(way === 'buffer' ? Buffer.from(json) : json, { binary: false });
    }
  };
  const start = performance.now();
  const pacer = setInterval(() => {
    const due = Math.floor((performance.now() - start) / FRAME_MS);
    for (; frames < due; frames++) sendFrame();
  }, 5);
  await new Promise((resolve) => setTimeout(resolve, WARM_UP_MS));
  const cpu = process.cpuUsage();
  const framesBefore = frames;
  await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
  const used = process.cpuUsage(cpu);
  const messages = (frames - framesBefore) * SOCKETS;
  clearInterval(pacer);
  for (const socket of sockets) socket.terminate();
  server.kill();
  return (used.user + used.system) / messages;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

if (process.argv.includes('--serve')) {
  serve();
} else {
  const results: Record<Way, number[]> = { string: [], buffer: [] };
  for (let i = 0; i < RUNS; i++) {
    for (const way of i % 2 ? (['buffer', 'string'] as const) : (['string', 'buffer'] as const)) {
      const us = await run(way);
      results[way].push(us);
      console.log(`run ${i + 1} ${way}: ${us.toFixed(2)} µs per message`);
    }
  }
  const [s, b] = [median(results.string), median(results.buffer)];
  console.log(`median: string ${s.toFixed(2)} µs, buffer ${b.toFixed(2)} µs per message (buffer / string ${(b / s).toFixed(3)}); ${SOCKETS} sockets, Node ${process.version}, ${new Date().toISOString()}`);
}
