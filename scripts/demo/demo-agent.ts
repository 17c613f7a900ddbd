/**
 * @module The demo's voice agent: a WebSocket server speaking the gateway's agent protocol (Twilio
 * Media Streams messages plus `hold`/`unhold`). It greets each call, then echoes what it hears.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { linearToUlaw, ulawToLinear } from '../../src/engine/media/index.js';

/** 20 ms of µ-law at 8 kHz: the frame size the protocol carries. */
const FRAME_BYTES = 160;
const GREETING_MARK = 'greeting';
/**
 * The sandbox far end echoes too, so an echo at full level would circle between the two ends for
 * ever; at half level (-6 dB) each round trip is quieter and the loop dies away.
 */
const ECHO_GAIN = 0.5;

/** Options of {@link DemoAgent.start}. */
export interface DemoAgentOptions {
  /** What the agent says first, as 8 kHz 16-bit PCM. */
  greeting: Int16Array;
  /** Where the agent narrates what it receives. */
  log: (line: string) => void;
  /** The loopback port to listen on; 0 (the default) picks a free one. */
  port?: number;
}

/** Encodes 8 kHz PCM as µ-law. */
function toUlaw(pcm: Int16Array): Buffer {
  const out = Buffer.alloc(pcm.length);
  for (let i = 0; i < pcm.length; i++) out[i] = linearToUlaw(pcm[i]!);
  return out;
}

/** The same µ-law audio at {@link ECHO_GAIN}. */
function attenuate(ulaw: Buffer): Buffer {
  const out = Buffer.alloc(ulaw.length);
  for (let i = 0; i < ulaw.length; i++) out[i] = linearToUlaw(Math.round(ulawToLinear(ulaw[i]!) * ECHO_GAIN));
  return out;
}

/** Fields of the protocol messages the agent reads; everything else is ignored. */
interface AgentMessage {
  event?: string;
  streamSid?: string;
  start?: { callSid?: string; customParameters?: Record<string, string> };
  media?: { payload?: string };
  mark?: { name?: string };
  dtmf?: { digit?: string };
}

/** One call's stream as the agent sees it. */
interface Stream {
  streamSid: string;
  /** Set once the greeting has been played: from then on caller audio is echoed. */
  echoing: boolean;
  /** 20 ms frames heard from the caller, and echoed back. */
  heard: number;
  echoed: number;
}

/** A small agent server on 127.0.0.1 with a free port, one call at a time or several. */
export class DemoAgent {
  readonly #server: WebSocketServer;
  readonly #greeting: Buffer;
  readonly #log: (line: string) => void;
  /** Every event received, in order, for the narration to wait on. */
  readonly events: string[] = [];
  readonly #waiters = new Set<() => void>();

  private constructor(server: WebSocketServer, options: DemoAgentOptions) {
    this.#server = server;
    this.#greeting = toUlaw(options.greeting);
    this.#log = options.log;
    server.on('connection', (socket) => this.#serve(socket));
  }

  static async start(options: DemoAgentOptions): Promise<DemoAgent> {
    const server = new WebSocketServer({ host: '127.0.0.1', port: options.port ?? 0 });
    await once(server, 'listening');
    return new DemoAgent(server, options);
  }

  get url(): string {
    return `ws://127.0.0.1:${(this.#server.address() as AddressInfo).port}/agent`;
  }

  /** Resolves once `event` has been received (counting earlier ones), or rejects after `ms`. */
  async until(event: string, ms = 10_000): Promise<void> {
    if (this.events.includes(event)) return;
    await new Promise<void>((resolve, reject) => {
      const check = (): void => {
        if (!this.events.includes(event)) return;
        clearTimeout(timer);
        this.#waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        reject(new Error(`the agent did not receive "${event}" within ${ms / 1000} s`));
      }, ms);
      this.#waiters.add(check);
    });
  }

  /** Closes every connection and the server. */
  async close(): Promise<void> {
    for (const client of this.#server.clients) client.terminate();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #record(event: string): void {
    this.events.push(event);
    for (const check of [...this.#waiters]) check();
  }

  #serve(socket: WebSocket): void {
    const call: Stream = { streamSid: '', echoing: false, heard: 0, echoed: 0 };
    socket.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) return;
      let message: AgentMessage;
      try {
        message = JSON.parse(data.toString('utf8')) as AgentMessage;
      } catch {
        this.#log('ignored a frame that is not JSON');
        return;
      }
      this.#handle(socket, call, message);
    });
    socket.on('close', (code) => {
      this.#log(`socket closed (${code}); heard ${(call.heard * 0.02).toFixed(1)} s of the caller, echoed ${(call.echoed * 0.02).toFixed(1)} s`);
      this.#record('close');
    });
  }

  #handle(socket: WebSocket, call: Stream, message: AgentMessage): void {
    const event = message.event ?? '(none)';
    if (event === 'media') {
      call.heard += 1;
      const payload = message.media?.payload;
      if (call.echoing && payload) {
        this.#send(socket, { event: 'media', streamSid: call.streamSid, media: { payload: attenuate(Buffer.from(payload, 'base64')).toString('base64') } });
        call.echoed += 1;
      }
      if (call.heard === 1) this.#log('first caller audio arrived');
    } else if (event === 'start') {
      call.streamSid = message.streamSid ?? '';
      const p = message.start?.customParameters ?? {};
      this.#log(`start: call ${p.call_id ?? '?'} from ${p.from ?? '?'} to ${p.to ?? '?'}; sending the greeting (${(this.#greeting.length / 8000).toFixed(1)} s)`);
      this.#greet(socket, call.streamSid);
    } else if (event === 'mark') {
      if (message.mark?.name === GREETING_MARK && !call.echoing) {
        call.echoing = true;
        this.#log('mark: the greeting has been played to the caller; echoing from now on');
      }
    } else if (event === 'dtmf') {
      this.#log(`dtmf: digit ${message.dtmf?.digit ?? '?'}`);
    } else {
      this.#log(`${event}${event === 'hold' ? ': caller audio stops until unhold' : ''}`);
    }
    this.#record(event);
  }

  /**
   * Sends the whole greeting at once, then a mark: the gateway queues agent audio and paces it
   * out in real time, and echoes the mark back once the audio before it has been played.
   */
  #greet(socket: WebSocket, streamSid: string): void {
    for (let at = 0; at < this.#greeting.length; at += FRAME_BYTES) {
      const frame = this.#greeting.subarray(at, at + FRAME_BYTES);
      this.#send(socket, { event: 'media', streamSid, media: { payload: frame.toString('base64') } });
    }
    this.#send(socket, { event: 'mark', streamSid, mark: { name: GREETING_MARK } });
  }

  #send(socket: WebSocket, message: Record<string, unknown>): void {
    if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
  }
}
