/** @module UdpTransport: SIP over UDP datagrams (RFC 3261 18), IPv4 or IPv6 by bound address. */
import { createSocket, type Socket } from 'node:dgram';
import { parseMessage } from '../messages/parse.js';
import { TransportError } from './transport-error.js';
import {
  familyOf, normalizeAddress, type Connection, type MessageSource, type SipEndpoint, type Transport,
  type TransportOptions, type TransportTarget,
} from './transport.js';

/**
 * Receive buffer asked of the kernel for the SIP socket. Linux's default (net.core.rmem_default,
 * usually 208 KiB) holds about 90 datagrams at their in-kernel size, under 100 ms of INVITE, ACK
 * and BYE at 500 calls/s: a process descheduled that long on a busy host loses requests, and the
 * peer's retransmissions (Timer A, Timer E) then cost 500 ms each. 4 MiB holds over a second. The
 * kernel caps it at net.core.rmem_max without an error; {@link UdpTransport.receiveBufferBytes}
 * tells what was granted.
 */
const RECEIVE_BUFFER_BYTES = 4 * 1024 * 1024;

/**
 * One UDP socket. Each datagram is one message (RFC 3261 18.3: octets after Content-Length are
 * ignored); datagrams above `maxMessageSize` are dropped unparsed.
 */
export class UdpTransport implements Transport {
  readonly protocol = 'UDP' as const;
  readonly family: 4 | 6;
  readonly #options: TransportOptions;
  readonly #socket: Socket;
  #local: SipEndpoint;

  constructor(options: TransportOptions) {
    this.#options = options;
    this.family = familyOf(options.host);
    this.#local = { address: options.host, port: options.port };
    this.#socket = createSocket({ type: this.family === 6 ? 'udp6' : 'udp4', ipv6Only: this.family === 6, recvBufferSize: RECEIVE_BUFFER_BYTES });
    this.#socket.on('message', (msg, rinfo) => this.#receive(msg, { address: rinfo.address, port: rinfo.port }));
    this.#socket.on('error', (err) => {
      options.delegate.onError?.(TransportError.from(err, 'UDP socket error', { protocol: 'UDP' }));
    });
  }

  get local(): SipEndpoint {
    return this.#local;
  }

  /** The socket's receive buffer as the kernel granted it (Linux reports twice the size set, for its bookkeeping). */
  get receiveBufferBytes(): number {
    return this.#socket.getRecvBufferSize();
  }

  listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error): void => {
        reject(TransportError.from(err, 'UDP bind failed', { protocol: 'UDP', address: this.#options.host, port: this.#options.port }));
      };
      this.#socket.once('error', onError);
      this.#socket.bind(this.#options.port, this.#options.host, () => {
        this.#socket.off('error', onError);
        const a = this.#socket.address();
        this.#local = { address: a.address, port: a.port };
        resolve();
      });
    });
  }

  #receive(msg: Buffer, from: SipEndpoint): void {
    const source: MessageSource = { protocol: 'UDP', address: normalizeAddress(from.address), port: from.port, local: this.#local };
    const delegate = this.#options.delegate;
    if (delegate.admit && !delegate.admit(source)) return;
    if (msg.length > this.#options.maxMessageSize) {
      delegate.onOversize?.(msg.length, source);
      return;
    }
    // Keep-alives (RFC 5626 uses STUN on UDP; some peers send bare CRLFs) carry no message.
    if (isBlank(msg)) return;
    delegate.onMessage(parseMessage(msg), source);
  }

  send(data: Buffer, target: TransportTarget): Promise<Connection | undefined> {
    const where = { protocol: 'UDP' as const, address: target.address, port: target.port };
    return new Promise((resolve, reject) => {
      try {
        this.#socket.send(data, target.port, target.address, (err) => {
          if (err) reject(TransportError.from(err, 'UDP send failed', where));
          else resolve(undefined);
        });
      } catch (err) {
        // Closed socket or invalid port: thrown synchronously by node:dgram.
        reject(TransportError.from(err, 'UDP send failed', where));
      }
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      try {
        this.#socket.close(() => resolve());
      } catch {
        resolve(); // already closed
      }
    });
  }
}

function isBlank(msg: Buffer): boolean {
  for (const b of msg) if (b !== 0x0d && b !== 0x0a && b !== 0x20 && b !== 0x00) return false;
  return true;
}
