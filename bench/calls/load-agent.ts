/**
 * @module The calls benchmark's load agent, run as its own child process: a WebSocket server
 * speaking the agent protocol (docs/API.md "Agent WebSocket protocol") to any number of calls. Each call gets a
 * 20 ms µ-law frame every 20 ms once its `start` arrives (paced on elapsed time, so a late timer
 * catches up instead of losing frames), and every `media` message from the gateway is counted,
 * apart from those carrying the agent's own frame back (sipp's echo through the gateway).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { AGENT_FRAME_BYTE, FRAME_BYTES, FRAME_MS, type AgentCallCounts, type AgentReply, type AgentRequest } from './protocol.js';

interface LiveCall {
  counts: AgentCallCounts;
  socket: WebSocket;
  /** The one message this call sends, built once: the load agent's own CPU stays small. */
  frameMessage: string;
  /** performance.now() of the first frame; frame k is due at firstAt + k * 20 ms. */
  firstAt: number;
}

const PAYLOAD = Buffer.alloc(FRAME_BYTES, AGENT_FRAME_BYTE).toString('base64');
const PAYLOAD_FIELD = `"payload":"${PAYLOAD}"`;
/** More than this many frames late (a stalled process) and the backlog is dropped, as a real agent's audio would be. */
const MAX_CATCH_UP = 10;

const calls = new Map<WebSocket, LiveCall>();
const byId = new Map<string, LiveCall>();

function reply(message: AgentReply): void {
  process.send?.(message);
}

interface StartMessage {
  event?: string;
  start?: { streamSid?: string; customParameters?: { call_id?: string } };
}

function onStart(socket: WebSocket, message: StartMessage): void {
  const callId = message.start?.customParameters?.call_id ?? `unknown-${byId.size}`;
  const streamSid = message.start?.streamSid ?? '';
  const call: LiveCall = {
    counts: { callId, received: 0, echoed: 0, sent: 0, skipped: 0, startedAt: Date.now(), closed: false },
    socket,
    frameMessage: JSON.stringify({ event: 'media', streamSid, media: { payload: PAYLOAD } }),
    firstAt: performance.now(),
  };
  calls.set(socket, call);
  byId.set(callId, call);
}

function onConnection(socket: WebSocket): void {
  socket.on('message', (data: Buffer, isBinary: boolean) => {
    if (isBinary) return;
    const text = data.toString('utf8');
    const call = calls.get(socket);
    if (call) {
      // Parse nothing on the hot path: the gateway's media messages are recognised by their fields.
      if (text.includes('"event":"media"')) {
        call.counts.received += 1;
        if (text.includes(PAYLOAD_FIELD)) call.counts.echoed += 1;
      }
      return;
    }
    const message = JSON.parse(text) as StartMessage;
    if (message.event === 'start') onStart(socket, message);
  });
  socket.on('close', () => {
    const call = calls.get(socket);
    if (call) call.counts.closed = true;
    calls.delete(socket);
  });
  socket.on('error', () => undefined);
}

/** Sends every frame that is due on every live call. */
function tick(): void {
  const now = performance.now();
  for (const call of calls.values()) {
    const due = Math.floor((now - call.firstAt) / FRAME_MS) + 1;
    let late = due - call.counts.sent - call.counts.skipped;
    if (late > MAX_CATCH_UP) {
      call.counts.skipped += late - MAX_CATCH_UP;
      late = MAX_CATCH_UP;
    }
    for (; late > 0; late -= 1) {
      call.socket.send(call.frameMessage);
      call.counts.sent += 1;
    }
  }
}

function onRequest(request: AgentRequest): void {
  switch (request.type) {
    case 'snapshot':
      reply({ type: 'snapshot', id: request.id, calls: [...byId.values()].map((c) => ({ ...c.counts })) });
      return;
    case 'forget-closed':
      for (const [id, call] of byId) if (call.counts.closed) byId.delete(id);
      return;
  }
}

const server = createServer((_req, res) => { res.writeHead(404).end(); });
// Accepts permessage-deflate, as common agent servers do: a gateway that offered it would have every frame compressed.
const wss = new WebSocketServer({ server, perMessageDeflate: true });
wss.on('connection', onConnection);
server.listen(0, '127.0.0.1', () => {
  reply({ type: 'listening', port: (server.address() as AddressInfo).port });
});
setInterval(tick, 10);
process.on('message', (m: AgentRequest) => onRequest(m));
process.on('disconnect', () => process.exit(0));
