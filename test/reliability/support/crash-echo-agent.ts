/**
 * @module An agent for many calls at once over the gateway's `custom` protocol (Twilio Media
 * Streams framing): every connection's `media` is sent straight back, so each call hears itself.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';

interface StreamMessage {
  event?: unknown;
  streamSid?: unknown;
  media?: { payload?: unknown };
}

/** What one connection (one call) did. */
export interface EchoStream {
  streamSid: string | undefined;
  /** Bytes of caller audio received (and echoed). */
  audioBytes: number;
  closed: boolean;
}

/** A text frame's characters, whichever buffer form ws delivered it in. */
function textOf(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data instanceof ArrayBuffer ? new Uint8Array(data) : data).toString('utf8');
}

export class EchoAgent {
  readonly streams: EchoStream[] = [];
  url = '';
  readonly #server: Server;
  readonly #wss = new WebSocketServer({ noServer: true });
  readonly #sockets = new Set<Socket>();

  private constructor() {
    this.#server = createServer((_req, res) => res.writeHead(404).end());
    this.#server.on('connection', (s: Socket) => {
      this.#sockets.add(s);
      s.on('close', () => this.#sockets.delete(s));
    });
    this.#server.on('upgrade', (req, socket: Socket, head) => {
      this.#wss.handleUpgrade(req, socket, head, (ws) => this.#onSocket(ws));
    });
  }

  static async start(): Promise<EchoAgent> {
    const agent = new EchoAgent();
    await new Promise<void>((resolve) => agent.#server.listen(0, '127.0.0.1', resolve));
    agent.url = `ws://127.0.0.1:${(agent.#server.address() as AddressInfo).port}/agent`;
    return agent;
  }

  /** Connections that are still open. */
  open(): EchoStream[] {
    return this.streams.filter((s) => !s.closed);
  }

  async close(): Promise<void> {
    for (const client of this.#wss.clients) client.terminate();
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #onSocket(ws: WebSocket): void {
    const stream: EchoStream = { streamSid: undefined, audioBytes: 0, closed: false };
    this.streams.push(stream);
    ws.on('close', () => { stream.closed = true; });
    ws.on('error', () => { stream.closed = true; });
    ws.on('message', (data: RawData, isBinary: boolean) => {
      if (isBinary) return;
      let message: StreamMessage;
      try {
        message = JSON.parse(textOf(data)) as StreamMessage;
      } catch {
        return;
      }
      if (message.event === 'start' && typeof message.streamSid === 'string') stream.streamSid = message.streamSid;
      const payload = message.media?.payload;
      if (message.event === 'media' && typeof payload === 'string') {
        stream.audioBytes += Buffer.from(payload, 'base64').length;
        ws.send(JSON.stringify({ event: 'media', streamSid: stream.streamSid, media: { payload } }));
      }
    });
  }
}
