/**
 * @module The UDP socket an RTP session speaks through: on the batched I/O addon where it is
 * built (Linux), else on node:dgram (see {@link useMediaIo}).
 */
import type { Socket } from 'node:dgram';
import { nativeMediaIo } from './native-udp.js';
import { bindUdp } from './udp-socket.js';

/**
 * One datagram: a buffer of its own, and the IPv4 source it came from. `receivedAt` is when the
 * kernel received it, on the `performance.now()` clock, where the I/O was set up to stamp arrivals
 * (see NativeMediaIoOptions), else undefined.
 */
export type DatagramHandler = (datagram: Buffer, address: string, port: number, receivedAt?: number) => void;

/**
 * A datagram the socket relayed itself by its {@link RelayRule}: the header fields as they
 * arrived, the datagram's length, and how long ago it arrived, in milliseconds (relayed datagrams
 * are reported in bulk; see {@link MediaSocket.catchUp}).
 */
export type RelayedHandler = (sequenceNumber: number, timestamp: number, ssrc: number, length: number, ageMs: number) => void;

/**
 * What a socket may relay without JavaScript: RTP from `peer` with this SSRC and payload type,
 * sent on another socket to `destination` with SSRC, sequence number, timestamp and payload type
 * rewritten (the offsets are added modulo 2^16 and 2^32). See native/media-io for what else a
 * datagram must be to qualify; any other datagram reaches {@link MediaSocket.onDatagram}.
 */
export interface RelayRule {
  peer: { address: string; port: number };
  ssrc: number;
  payloadType: number;
  destination: { address: string; port: number };
  outSsrc: number;
  sequenceOffset: number;
  timestampOffset: number;
  outPayloadType: number;
}

export interface MediaSocket {
  /** The bound port. */
  readonly port: number;
  onDatagram: DatagramHandler;
  /** Called for each datagram relayed by the rule given to {@link relay}. */
  onRelayed: RelayedHandler;
  /**
   * Relays by `rule` on `via` from now on (null: stops). False where the I/O cannot (node:dgram,
   * or either socket closed); the datagrams then keep coming to {@link onDatagram}.
   */
  relay(rule: RelayRule | null, via?: MediaSocket): boolean;
  /**
   * Reports to {@link onRelayed} (of every socket) the relayed datagrams not yet reported. Relayed
   * datagrams are reported in bulk, within 20 ms, and before any later datagram reaches
   * {@link onDatagram}; {@link relay} and {@link close} catch up first themselves.
   */
  catchUp(): void;
  /** Best effort: a datagram that cannot go is lost, never an error. `address` is an IPv4 literal. */
  send(packet: Buffer, port: number, address: string): void;
  /** Idempotent. */
  close(): void;
}

export type MediaIoKind = 'native' | 'dgram';

class DgramMediaSocket implements MediaSocket {
  onDatagram: DatagramHandler = () => undefined;
  onRelayed: RelayedHandler = () => undefined;
  #closed = false;

  constructor(
    private readonly socket: Socket,
    readonly port: number,
  ) {
    socket.on('message', (datagram, rinfo) => this.onDatagram(datagram, rinfo.address, rinfo.port));
    // A send to an unreachable port surfaces as an async socket error: media is best effort.
    socket.on('error', () => undefined);
  }

  send(packet: Buffer, port: number, address: string): void {
    if (!this.#closed) this.socket.send(packet, port, address);
  }

  /** Every datagram goes through JavaScript on node:dgram. */
  relay(): boolean {
    return false;
  }

  /** Nothing is relayed, so nothing is owed. */
  catchUp(): void {}

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.socket.close();
  }
}

/** The operator's choice (`rtp.socket_io`): the addon where it is built, or one of the two. */
export type MediaIoChoice = 'auto' | MediaIoKind;

let selected: MediaIoKind | undefined;

/**
 * Chooses the I/O of the sockets opened from now on and says which it is, or null (choosing
 * nothing) when `native` is asked for and the addon is not built. Without a call, the first
 * socket chooses `auto`. `relayThread` and `relayThreadPriority` (`rtp.relay_thread`,
 * `rtp.relay_thread_priority`) are the addon's, set once per thread.
 */
export function useMediaIo(choice: MediaIoChoice, options: { relayThread?: boolean; relayThreadPriority?: number } = {}): MediaIoKind | null {
  if (choice === 'dgram') return (selected = 'dgram');
  if (nativeMediaIo({ relayThread: options.relayThread, relayThreadPriority: options.relayThreadPriority }) !== null) return (selected = 'native');
  return choice === 'native' ? null : (selected = 'dgram');
}

/**
 * Whether the relay thread got the real-time priority asked of {@link useMediaIo}: null when it
 * was not asked for (or media uses node:dgram), else the errno name the kernel refused it with, or
 * 'granted'.
 */
export function relayThreadPriorityOutcome(): string | null {
  const io = selected === 'native' ? nativeMediaIo() : null;
  if (io === null || !io.relayThread || io.relayThreadPriority === 0) return null;
  return io.relayPriorityRefused ?? 'granted';
}

/** Binds a media socket to `address:port` (0 for any port); rejects with the bind error (EADDRINUSE). */
export async function openMediaSocket(address: string, port: number): Promise<MediaSocket> {
  if ((selected ?? useMediaIo('auto')) === 'native') return nativeMediaIo()!.open(address, port);
  const socket = await bindUdp(address, port);
  return new DgramMediaSocket(socket, socket.address().port);
}
