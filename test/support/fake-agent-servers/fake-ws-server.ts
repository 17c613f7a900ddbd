/**
 * @module The part every fake agent platform shares: one node:http server on 127.0.0.1 port 0
 * that answers the platform's REST calls and upgrades its streaming path to a WebSocket, and a
 * record of everything the client sent.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { withDeadline } from '../deadline.js';

/** One HTTP request as the fake saw it (REST side or WebSocket upgrade). */
export interface RecordedHttp {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A text frame the client sent, parsed, or a binary frame. */
export type ReceivedFrame = { kind: 'json'; message: Record<string, unknown>; text: string } | { kind: 'binary'; data: Buffer };

/** REST handler: answer and return true, or return false for 404. */
export type HttpRoute = (request: RecordedHttp, response: ServerResponse) => boolean;
/** Upgrade check: a status to refuse the handshake with, or undefined to accept. */
export type UpgradeCheck = (request: RecordedHttp) => number | undefined;

/** What the contract suite and the per-adapter tests drive, whatever the protocol. */
export interface FakeAgentServer {
  /** The URL to give as the agent endpoint (ws:// or http:// call creation). */
  readonly url: string;
  readonly externalAgentId: string;
  /** The key the fake accepts. */
  readonly apiKey: string | undefined;
  /** The platform's conversation id, when the protocol has one. */
  readonly conversationId: string | undefined;
  readonly core: FakeWsCore;
  /** Caller audio received so far, decoded from the wire, concatenated. */
  receivedAudio(): Buffer;
  /** Sends agent audio (in the platform's output format) down the socket. */
  sendAudio(audio: Buffer): void;
  /** Sends the platform's barge-in signal. */
  interrupt(): void;
  /** Sends a final transcript; absent when the protocol has none. */
  sendTranscript?(role: 'caller' | 'agent', text: string): void;
}

/** The server, the socket and the records. */
export class FakeWsCore {
  readonly http: RecordedHttp[] = [];
  readonly frames: ReceivedFrame[] = [];
  socket: WebSocket | undefined;
  /** Close code the client sent, once its socket is closed. */
  closedWith: number | undefined;
  onConnection: (socket: WebSocket, request: RecordedHttp) => void = () => {};
  onFrame: (frame: ReceivedFrame) => void = () => {};
  readonly #server: Server;
  /** Accepts permessage-deflate, as platforms' servers may: a client that offered it would get it. */
  readonly #wss = new WebSocketServer({ noServer: true, perMessageDeflate: true });
  readonly #waiters: { check: () => boolean; resolve: () => void }[] = [];
  readonly #routes: HttpRoute[] = [];
  #upgradeCheck: UpgradeCheck = () => undefined;
  readonly #sockets = new Set<Socket>();
  /** The TCP connection under the last accepted WebSocket. */
  #connection: Socket | undefined;

  constructor() {
    this.#server = createServer((req, res) => this.#onRequest(req, res));
    this.#server.on('connection', (s: Socket) => {
      this.#sockets.add(s);
      s.on('close', () => this.#sockets.delete(s));
    });
    this.#server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => this.#onUpgrade(req, socket, head));
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    return (this.#server.address() as AddressInfo).port;
  }

  route(handler: HttpRoute): void {
    this.#routes.push(handler);
  }

  checkUpgrade(check: UpgradeCheck): void {
    this.#upgradeCheck = check;
  }

  send(data: unknown): void {
    this.socket?.send(Buffer.isBuffer(data) ? data : JSON.stringify(data), { binary: Buffer.isBuffer(data) });
  }

  /** Stops reading the connection, as a stalled platform does: the client's writes back up. */
  stopReading(): void {
    this.#connection?.pause();
  }

  resumeReading(): void {
    this.#connection?.resume();
  }

  /** Closes the platform side of the socket with `code` (RFC 6455 §7.4). */
  closeSocket(code: number, reason = ''): void {
    this.socket?.close(code, reason);
  }

  /** Every text frame as it arrived. */
  textFrames(): string[] {
    return this.frames.flatMap((f) => (f.kind === 'json' ? [f.text] : []));
  }

  jsonMessages(): Record<string, unknown>[] {
    return this.frames.flatMap((f) => (f.kind === 'json' ? [f.message] : []));
  }

  /**
   * Resolves once `check` holds; rechecked after every frame, request and close. Rejects after
   * `ms`, naming `what` (or the check's source) and the frames received so far.
   */
  until(check: () => boolean, what = check.toString(), ms = 30_000): Promise<void> {
    if (check()) return Promise.resolve();
    const waiter = { check, resolve: (): void => undefined };
    const met = new Promise<void>((resolve) => {
      waiter.resolve = resolve;
      this.#waiters.push(waiter);
    });
    return withDeadline(what, met, ms).catch((err: Error) => {
      this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
      throw new Error(`fake agent server: ${err.message} (${this.frames.length} frames received)`);
    });
  }

  async close(): Promise<void> {
    for (const client of this.#wss.clients) client.terminate();
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #wake(): void {
    for (const waiter of [...this.#waiters]) {
      if (!waiter.check()) continue;
      this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  }

  #onRequest(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const recorded = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() };
      this.http.push(recorded);
      if (!this.#routes.some((r) => r(recorded, res))) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
      }
      this.#wake();
    });
  }

  #onUpgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
    const recorded = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: '' };
    this.http.push(recorded);
    const refusal = this.#upgradeCheck(recorded);
    if (refusal !== undefined) {
      socket.end(`HTTP/1.1 ${refusal} Refused\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      this.#wake();
      return;
    }
    this.#wss.handleUpgrade(req, socket, head, (ws) => {
      this.socket = ws;
      this.#connection = socket;
      ws.on('message', (data: Buffer, isBinary: boolean) => {
        const text = isBinary ? '' : data.toString();
        const frame: ReceivedFrame | undefined = isBinary
          ? { kind: 'binary', data: Buffer.from(data) }
          : { kind: 'json', message: JSON.parse(text) as Record<string, unknown>, text };
        this.frames.push(frame);
        this.onFrame(frame);
        this.#wake();
      });
      ws.on('close', (code: number) => {
        this.closedWith = code;
        this.#wake();
      });
      this.onConnection(ws, recorded);
      this.#wake();
    });
  }
}

/** Answers `status` with a JSON body. */
export function json(response: ServerResponse, status: number, body: unknown): true {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  return true;
}
