/**
 * @module A small real-socket transport (UDP and TCP on 127.0.0.1) implementing the UA core's
 * SipTransportPort, for loopback and interop tests and the benchmark. It uses the product's
 * parser, framer and serializer; malformed requests get 400 as the transport layer would.
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { once } from 'node:events';
import { parseMessage, SipStreamFramer } from '../../src/engine/sip/messages/parse.js';
import { serializeMessage } from '../../src/engine/sip/messages/serialize.js';
import { createResponse } from '../../src/engine/sip/messages/response.js';
import type { SipMessage } from '../../src/engine/sip/messages/sip-message.js';
import type { SipProtocol, SipSource, SipTarget, SipTransportPort } from '../../src/engine/sip/user-agent-core/transport-port.js';

export type ReceiveFn = (message: SipMessage, source: SipSource) => void;

/** UDP and TCP listeners on one port number each; `onReceive` gets every parsed message. */
export class TestTransport implements SipTransportPort {
  onReceive: ReceiveFn = () => undefined;
  readonly host: string;
  #udp: UdpSocket | undefined;
  #tcp: Server | undefined;
  readonly #conns = new Map<string, Socket>();
  udpPort = 0;
  tcpPort = 0;

  constructor(host = '127.0.0.1') {
    this.host = host;
  }

  async listen(udpPort = 0, tcpPort = 0): Promise<void> {
    const udp = createSocket('udp4');
    udp.on('message', (buf, rinfo) => this.#onBytes(buf, { address: rinfo.address, port: rinfo.port, protocol: 'UDP' }));
    udp.bind(udpPort, this.host);
    await once(udp, 'listening');
    this.#udp = udp;
    this.udpPort = udp.address().port;
    const tcp = createServer((s) => this.#adopt(s));
    tcp.listen(tcpPort, this.host);
    await once(tcp, 'listening');
    this.#tcp = tcp;
    const a = tcp.address();
    this.tcpPort = typeof a === 'object' && a ? a.port : 0;
  }

  localAddress(protocol: SipProtocol): { host: string; port: number } {
    return { host: this.host, port: protocol === 'UDP' ? this.udpPort : this.tcpPort };
  }

  isReliable(protocol: SipProtocol): boolean {
    return protocol !== 'UDP';
  }

  async send(message: SipMessage, target: SipTarget): Promise<void> {
    await this.sendRaw(serializeMessage(message), target);
  }

  async sendRaw(bytes: Buffer, target: SipTarget): Promise<void> {
    if (target.protocol === 'UDP') {
      const udp = this.#udp;
      if (!udp) throw new Error('transport closed');
      await new Promise<void>((resolve, reject) => udp.send(bytes, target.port, target.address, (err) => (err ? reject(err) : resolve())));
      return;
    }
    const conn = (target.connection as Socket | undefined) ?? this.#conns.get(`${target.address}:${target.port}`) ?? (await this.#connect(target));
    conn.write(bytes);
  }

  async #connect(target: SipTarget): Promise<Socket> {
    const s = connect(target.port, target.address);
    await once(s, 'connect');
    this.#adopt(s, `${target.address}:${target.port}`);
    return s;
  }

  #adopt(s: Socket, key = `${s.remoteAddress ?? ''}:${s.remotePort ?? 0}`): void {
    this.#conns.set(key, s);
    const source: SipSource = { address: s.remoteAddress ?? '', port: s.remotePort ?? 0, protocol: 'TCP', connection: s };
    const framer = new SipStreamFramer({
      maxMessageSize: 65_535,
      onMessage: (outcome) => this.#onOutcome(outcome, source),
      onError: () => s.destroy(),
    });
    s.on('data', (chunk: Buffer) => framer.push(chunk));
    s.on('error', () => undefined);
    s.on('close', () => this.#conns.delete(key));
  }

  #onBytes(buf: Buffer, source: SipSource): void {
    if (buf.length <= 4 && buf.toString().trim() === '') return; // keep-alive
    this.#onOutcome(parseMessage(buf), source);
  }

  #onOutcome(outcome: ReturnType<typeof parseMessage>, source: SipSource): void {
    if (outcome.ok) {
      this.onReceive(outcome.message, source);
    } else if (outcome.request && outcome.request.method !== 'ACK') {
      try {
        void this.send(createResponse(outcome.request, 400, outcome.error.message.slice(0, 60).replace(/[\r\n]/g, ' ')), source).catch(() => undefined);
      } catch {
        // The request was too broken to answer.
      }
    }
  }

  async close(): Promise<void> {
    for (const s of this.#conns.values()) s.destroy();
    this.#conns.clear();
    const udp = this.#udp;
    this.#udp = undefined;
    if (udp) await new Promise<void>((r) => udp.close(() => r()));
    const tcp = this.#tcp;
    this.#tcp = undefined;
    if (tcp) await new Promise<void>((r) => tcp.close(() => r()));
  }
}
