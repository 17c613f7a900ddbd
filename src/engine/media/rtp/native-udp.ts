/**
 * @module Media sockets on the batched I/O addon (native/media-io, Linux): one epoll set for all
 * media sockets, drained with recvmmsg and handed to JavaScript once per batch, sends by sendto.
 * Loaded when built; {@link nativeMediaIo} is null otherwise and media uses node:dgram.
 */
import { createRequire } from 'node:module';
import { constants } from 'node:os';
import type { DatagramHandler, MediaSocket, RelayedHandler, RelayRule } from './media-socket.js';

interface MediaIoAddon {
  readonly MAX_BATCH: number;
  readonly SLOT_BYTES: number;
  readonly META_STRIDE: number;
  readonly MAX_RECORDS: number;
  readonly RECORD_STRIDE: number;
  /** `onBatch(count, relayed)`: `relayed` records first, then `count` slots of the arena. */
  init(onBatch: (count: number, relayed: number) => void, arena: Buffer, meta: Uint32Array, timestamps: boolean, records: Uint32Array, relayThread: boolean, relayPriority: number): void;
  /** 0 if a thread may run in SCHED_RR at `priority` here, else the errno that refuses it. */
  probeRelayPriority(priority: number): number;
  /** A bound socket's descriptor, or -errno. */
  open(ipv4: number, port: number, token: number): number;
  localPort(fd: number): number;
  /** Bytes sent, or -errno. */
  send(fd: number, packet: Buffer, ipv4: number, port: number): number;
  close(fd: number): void;
  /** Sets (or with null removes) the socket's relay rule; 0, or -EBADF. */
  relay(fd: number, rule: Uint32Array | null): number;
  /** Hands over the records not yet handed over; how many there are. */
  takeRelayed(): number;
}

function loadAddon(): MediaIoAddon | null {
  if (process.platform !== 'linux') return null;
  try {
    // Same depth from src/ and dist/: <root>/{src,dist}/engine/media/rtp/.
    return createRequire(import.meta.url)('../../../../native/media-io/build/Release/media_io.node') as MediaIoAddon;
  } catch {
    return null;
  }
}

const ERRNO_NAMES = new Map(Object.entries(constants.errno).map(([name, value]) => [value, name]));

function errnoError(errno: number, syscall: string, address: string, port: number): NodeJS.ErrnoException {
  const code = ERRNO_NAMES.get(errno) ?? `E${errno}`;
  return Object.assign(new Error(`${syscall} ${code} ${address}:${port}`), { code, errno: -errno, syscall });
}

// Peers are few and long-lived, so address conversions are cached; the caches only ever hold
// addresses seen on the media path and are dropped whole if a port scan fills them.
const CACHE_LIMIT = 4096;
const toNumber = new Map<string, number>();
const toText = new Map<number, string>();

/** A dotted-quad IPv4 literal as an unsigned 32-bit number, or -1 if it is not one. */
export function ipv4ToUint32(address: string): number {
  const cached = toNumber.get(address);
  if (cached !== undefined) return cached;
  const parts = address.split('.');
  if (parts.length !== 4) return -1;
  let value = 0;
  for (const part of parts) {
    if (part.length === 0 || part.length > 3) return -1;
    let octet = 0;
    for (let i = 0; i < part.length; i++) {
      const digit = part.charCodeAt(i) - 48;
      if (digit < 0 || digit > 9) return -1;
      octet = octet * 10 + digit;
    }
    if (octet > 255) return -1;
    value = value * 256 + octet;
  }
  if (toNumber.size >= CACHE_LIMIT) toNumber.clear();
  toNumber.set(address, value);
  return value;
}

export function uint32ToIpv4(value: number): string {
  let text = toText.get(value);
  if (text === undefined) {
    text = `${value >>> 24}.${(value >>> 16) & 255}.${(value >>> 8) & 255}.${value & 255}`;
    if (toText.size >= CACHE_LIMIT) toText.clear();
    toText.set(value, text);
  }
  return text;
}

class NativeMediaSocket implements MediaSocket {
  onDatagram: DatagramHandler = () => undefined;
  onRelayed: RelayedHandler = () => undefined;
  #closed = false;

  constructor(
    private readonly io: NativeMediaIo,
    readonly fd: number,
    readonly token: number,
    readonly port: number,
  ) {}

  send(packet: Buffer, port: number, address: string): void {
    if (this.#closed) return;
    const ip = ipv4ToUint32(address);
    // Best effort, as media is: a full send buffer or an unreachable peer loses this packet only.
    if (ip >= 0) this.io.addon.send(this.fd, packet, ip, port);
  }

  relay(rule: RelayRule | null, via?: MediaSocket): boolean {
    if (this.#closed) return false;
    this.io.catchUp();
    let words: Uint32Array | null = null;
    if (rule !== null) {
      if (!(via instanceof NativeMediaSocket) || via.#closed) return false;
      const peer = ipv4ToUint32(rule.peer.address);
      const destination = ipv4ToUint32(rule.destination.address);
      if (peer < 0 || destination < 0) return false;
      words = Uint32Array.of(
        peer, rule.peer.port, rule.ssrc, rule.payloadType,
        via.fd, destination, rule.destination.port,
        rule.outSsrc, rule.sequenceOffset, rule.timestampOffset, rule.outPayloadType,
      );
    }
    const done = this.io.addon.relay(this.fd, words) === 0;
    // The relay thread may have relayed by the old rule until the swap: those records are the
    // old rule's, and the caller's bookkeeping moves to the new one when this returns.
    this.io.catchUp();
    return done;
  }

  catchUp(): void {
    this.io.catchUp();
  }

  close(): void {
    if (this.#closed) return;
    this.io.catchUp();
    this.#closed = true;
    this.io.forget(this.token);
    this.io.addon.close(this.fd);
  }
}

export interface NativeMediaIoOptions {
  /**
   * Have the kernel stamp every datagram's arrival (SO_TIMESTAMPNS) and pass it to handlers as
   * `receivedAt`, on the `performance.now()` clock: how long datagrams wait before they are read.
   */
  receiveTimestamps?: boolean;
  /**
   * Relay the sockets with relay rules on a thread of the addon's own, away from the event loop
   * (native/media-io/relay_thread.c). On by default; off, the event loop relays them itself.
   */
  relayThread?: boolean;
  /**
   * 1 to 99: run the relay thread in SCHED_RR at that priority, so that a datagram never waits for
   * the thread to get a core (needs CAP_SYS_NICE or RLIMIT_RTPRIO). 0, the default: the ordinary
   * time-sharing class. Refused by the kernel, the thread runs time-sharing and
   * {@link NativeMediaIo.relayPriorityRefused} says why.
   */
  relayThreadPriority?: number;
}

const NO_AGE = 0xffffffff;
/** The top bit of a datagram's length: the addon relayed it by the socket's rule (and made a record of it). */
const RELAYED = 0x80000000;

/** The addon, initialised for this thread, with the sockets it dispatches batches to. */
export class NativeMediaIo {
  readonly #sockets = new Map<number, NativeMediaSocket>();
  readonly #arena: Buffer;
  readonly #meta: Uint32Array;
  /** Word 0: records pending in the addon; then the records handed over (see native/media-io/media_io.h). */
  readonly #records: Uint32Array;
  readonly #recordStride: number;
  readonly #slot: number;
  readonly #stride: number;
  readonly receiveTimestamps: boolean;
  readonly relayThread: boolean;
  /** The relay thread's SCHED_RR priority as asked for (0: time-sharing). */
  readonly relayThreadPriority: number;
  /** The errno (EPERM) with which the kernel refused {@link relayThreadPriority}, or null. */
  readonly relayPriorityRefused: string | null;
  #nextToken = 1;

  constructor(
    readonly addon: MediaIoAddon,
    options: NativeMediaIoOptions = {},
  ) {
    this.#slot = addon.SLOT_BYTES;
    this.#stride = addon.META_STRIDE;
    this.receiveTimestamps = options.receiveTimestamps ?? false;
    this.relayThread = options.relayThread ?? true;
    this.relayThreadPriority = options.relayThreadPriority ?? 0;
    if (!Number.isInteger(this.relayThreadPriority) || this.relayThreadPriority < 0 || this.relayThreadPriority > 99) throw new RangeError('media I/O: relayThreadPriority is an integer from 0 to 99');
    // Asked once, up front, so that the gateway can say so at start-up rather than at the first relayed call.
    const refused = this.relayThread && this.relayThreadPriority > 0 ? addon.probeRelayPriority(this.relayThreadPriority) : 0;
    this.relayPriorityRefused = refused === 0 ? null : (ERRNO_NAMES.get(refused) ?? `errno ${refused}`);
    // 16 MiB of address space, not of memory: left unfilled, a page is backed once a datagram lands in it.
    this.#arena = Buffer.allocUnsafeSlow(addon.MAX_BATCH * addon.SLOT_BYTES);
    this.#meta = new Uint32Array(addon.MAX_BATCH * addon.META_STRIDE);
    this.#recordStride = addon.RECORD_STRIDE;
    this.#records = new Uint32Array(1 + addon.MAX_RECORDS * addon.RECORD_STRIDE);
    addon.init(this.#onBatch, this.#arena, this.#meta, this.receiveTimestamps, this.#records, this.relayThread, refused === 0 ? this.relayThreadPriority : 0);
  }

  /** Binds `address:port` (0 for any port); throws the bind error (EADDRINUSE) as node:dgram would. */
  open(address: string, port: number): MediaSocket {
    const ip = ipv4ToUint32(address);
    if (ip < 0) throw errnoError(constants.errno.EINVAL, 'bind', address, port);
    const token = this.#nextToken;
    this.#nextToken = token === 0xffffffff ? 1 : token + 1;
    const fd = this.addon.open(ip, port, token);
    if (fd < 0) throw errnoError(-fd, 'bind', address, port);
    const socket = new NativeMediaSocket(this, fd, token, port === 0 ? this.addon.localPort(fd) : port);
    this.#sockets.set(token, socket);
    return socket;
  }

  forget(token: number): void {
    this.#sockets.delete(token);
  }

  get openSockets(): number {
    return this.#sockets.size;
  }

  /**
   * Brings the sockets' relayed-packet bookkeeping up to date. The addon reports relayed datagrams
   * in bulk, up to 20 ms late (and the relay thread goes on relaying meanwhile); whatever reads or moves what they count (statistics, a sequencer
   * another source is about to use, a rule) calls this first. Rule changes and closing do.
   */
  catchUp(): void {
    if (this.#records[0] !== 0) this.#dispatchRelayed(this.addon.takeRelayed());
  }

  #dispatchRelayed(count: number): void {
    const records = this.#records;
    const stride = this.#recordStride;
    for (let i = 0, r = 1; i < count; i++, r += stride) {
      // A socket closed since is gone from the map, and its records with it.
      this.#sockets.get(records[r]!)?.onRelayed(records[r + 1]!, records[r + 2]!, records[r + 3]!, records[r + 4]!, records[r + 5]! / 1e6);
    }
  }

  readonly #onBatch = (count: number, relayed: number): void => {
    // Records first: they arrived before this batch's datagrams.
    this.#dispatchRelayed(relayed);
    const meta = this.#meta;
    // The addon measured each datagram's age just before this call.
    const handedOverAt = this.receiveTimestamps ? performance.now() : 0;
    for (let i = 0; i < count; i++) {
      const m = i * this.#stride;
      // A socket closed by an earlier datagram's handler in this batch gets none of the rest.
      const socket = this.#sockets.get(meta[m]!);
      const length = meta[m + 1]!;
      // A relayed datagram's record came with the records.
      if (socket === undefined || length >= RELAYED || length > this.#slot) continue;
      // A copy of its own, as node:dgram gives: handlers may keep or forward the buffer.
      const datagram = Buffer.allocUnsafe(length);
      this.#arena.copy(datagram, 0, i * this.#slot, i * this.#slot + length);
      const age = meta[m + 4]!;
      const receivedAt = this.receiveTimestamps && age !== NO_AGE ? handedOverAt - age / 1e6 : undefined;
      socket.onDatagram(datagram, uint32ToIpv4(meta[m + 2]!), meta[m + 3]!, receivedAt);
    }
  };
}

let instance: NativeMediaIo | null | undefined;

/**
 * The batched I/O for this thread, or null where the addon is not built (or not Linux). The first
 * call sets it up, with `options`; a later call asking for other options throws.
 */
export function nativeMediaIo(options: NativeMediaIoOptions = {}): NativeMediaIo | null {
  if (instance === undefined) {
    const addon = loadAddon();
    instance = addon === null ? null : new NativeMediaIo(addon, options);
  } else if (instance !== null && options.receiveTimestamps !== undefined && options.receiveTimestamps !== instance.receiveTimestamps) {
    throw new Error('media I/O is already set up with other receive timestamps');
  } else if (instance !== null && options.relayThread !== undefined && options.relayThread !== instance.relayThread) {
    throw new Error('media I/O is already set up with the relay thread ' + (instance.relayThread ? 'on' : 'off'));
  } else if (instance !== null && options.relayThreadPriority !== undefined && options.relayThreadPriority !== instance.relayThreadPriority) {
    throw new Error(`media I/O is already set up with relay thread priority ${instance.relayThreadPriority}`);
  }
  return instance;
}
