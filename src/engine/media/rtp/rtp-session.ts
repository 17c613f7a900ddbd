/**
 * @module One RTP/RTCP endpoint on a port pair (bound by port-pair.ts): ownership of what it hears,
 * symmetric latching, header continuity, statistics and media time-out. Its RTCP (report timer,
 * destination, reception) is {@link RtcpChannel}'s, in rtcp-channel.ts; the links of its relay
 * rules are {@link RtpRelay}'s, in rtp-relay.ts.
 */
import type { Clock } from '../../../common/clock.js';
import { InvariantError } from '../../../common/errors.js';
import { SourceLatch, type RtpRefusalCounter, type RtpRefusalReason } from './source-latch.js';
import { isRtcpPacket, rtpPayloadOffset, rtpSequenceNumber, rtpSsrc, rtpTimestamp, RTP_HEADER_SIZE } from './packet.js';
import type { PortPool, PortsExhausted } from './port-pool.js';
import { bindPortPair } from './port-pair.js';
import type { MediaAddress, RtpSessionOptions, RtpSessionOwner, RtpSessionStats } from './rtp-session-types.js';
import { SilenceWatch } from './silence-watch.js';
import { RtcpReporter } from './rtcp-reporter.js';
import { RtcpChannel } from './rtcp-channel.js';
import { RtpRelay, type RelayedStream } from './rtp-relay.js';
import { RtpSequencer } from './sequencer.js';
import type { MediaSocket } from './media-socket.js';
import { SrtpTransform, type SrtpKeys } from '../srtp/srtp-transform.js';

export type { MediaAddress, RtpSessionOptions, RtpSessionOwner, RtpSessionStats } from './rtp-session-types.js';

/** Gives a taken session back (see {@link RtpSession.take}); idempotent. */
export type ReleaseSession = () => void;

/** What an unowned session does with what it hears: nothing. */
const NO_OWNER: RtpSessionOwner = Object.freeze({});

/**
 * One media stream endpoint on an even port (RTCP on port+1, or on the same port with rtcp-mux,
 * RFC 5761). Until a source is latched it sends to the address from SDP; then it sends to the
 * latched source (symmetric RTP, RFC 4961), which crosses NATs whose SDP lies. Which sources are
 * latched and learned is {@link SourceLatch}'s rule (docs/SECURITY.md "Media sources"): with
 * `strictSource` (the default) a stranger's packets are refused, counted and never passed on,
 * however well-formed; a new port of the latched host (a NAT rebinding) is learned after
 * {@link LATCH_PROBATION} packets in sequence. With SRTP ({@link RtpSession.setSrtp}) every packet
 * is authenticated before anything else looks at it, so only the keyholder can latch.
 *
 * Media ownership (docs/ARCHITECTURE.md "Media ownership"): what the session hears goes to one
 * owner at a time, who takes it with {@link take} and gives it back with the function that
 * returns; the media time-out goes to the one watcher of {@link watchMedia}, the call, whoever
 * owns the packets meanwhile.
 */
export class RtpSession {
  /** Read once per packet: the hot path costs one property read, as a public delegate did. */
  #owner: RtpSessionOwner = NO_OWNER;
  #onMediaTimeout: ((session: RtpSession) => void) | null = null;
  readonly localPort: number;
  readonly sequencer: RtpSequencer;
  readonly #rtp: MediaSocket;
  readonly #rtcp: RtcpChannel;
  readonly #clock: Clock;
  readonly #ports: PortPool;
  readonly #reporter: RtcpReporter;
  readonly #latch: SourceLatch;
  readonly #refusals: RtpRefusalCounter | undefined;
  #remote: MediaAddress | null = null;
  readonly #silence: SilenceWatch;
  #rejected = 0;
  #invalid = 0;
  #accepted = 0;
  #octetsAccepted = 0;
  #unauthenticated = 0;
  #srtp: SrtpTransform | null = null;
  #closed = false;
  /** The relay rules out of and into this session (see {@link relayTo}). */
  readonly #relay: RtpRelay;
  /** What the negotiated direction lets us send (RFC 3264 §5.1); see {@link setSending}. */
  #sendsRtp = true;

  private constructor(rtp: MediaSocket, rtcp: MediaSocket | null, port: number, options: RtpSessionOptions) {
    this.#rtp = rtp;
    this.localPort = port;
    this.#clock = options.clock;
    this.#ports = options.ports;
    const clockRate = options.clockRate ?? 8000;
    this.sequencer = new RtpSequencer({ clockRate, samplesPerPacket: options.samplesPerPacket ?? clockRate / 50 });
    this.#reporter = new RtcpReporter(clockRate, options.cname ?? `vgw-${port}@${options.bindAddress}`);
    this.#latch = new SourceLatch({ strict: options.strictSource ?? true, relatchIdleMs: options.relatchIdleMs ?? 1000, mediaNetworks: options.mediaNetworks });
    this.#refusals = options.refusals;
    this.#relay = new RtpRelay(rtp, this.sequencer, this.#reporter);
    this.#silence = new SilenceWatch(this.#clock, options.mediaTimeoutMs ?? 0, () => {
      if (!this.#closed) this.#onMediaTimeout?.(this);
    });
    rtp.onDatagram = this.#onRtpDatagram;
    rtp.onRelayed = this.#onRelayed;
    // Read when a report goes or comes: the far end and the keys change over the session's life.
    const host = { remote: (): MediaAddress | null => this.#remote, srtp: (): SrtpTransform | null => this.#srtp };
    this.#rtcp = new RtcpChannel({
      host, rtp, rtcp, clock: this.#clock, reporter: this.#reporter, latch: this.#latch, sequencer: this.sequencer,
      intervalMs: options.rtcpIntervalMs ?? 5000, refusals: this.#refusals,
    });
  }

  /** Binds an RTP/RTCP port pair from the pool, skipping ports another process holds. */
  static async open(options: RtpSessionOptions): Promise<RtpSession | PortsExhausted> {
    return await bindPortPair(options.ports, options.bindAddress, options, (rtp, rtcp, port) => new RtpSession(rtp, rtcp, port, options));
  }

  /**
   * Takes what the session hears (RTP packets, latching) for `owner` until the returned function
   * is called. One owner at a time: taking a session someone owns is a bug and throws. A stale
   * release (after the session was given back and taken again) changes nothing.
   */
  take(owner: RtpSessionOwner): ReleaseSession {
    if (this.#owner !== NO_OWNER) throw new InvariantError(`rtp ${this.localPort} is owned already: release it before taking it`);
    const held = Object.freeze({ ...owner });
    this.#owner = held;
    return () => {
      if (this.#owner === held) this.#owner = NO_OWNER;
    };
  }

  /** Whether someone took the session (see {@link take}). */
  get isOwned(): boolean {
    return this.#owner !== NO_OWNER;
  }

  /**
   * Starts the media time-out: `onTimeout` runs once the far end has been silent for the
   * session's `mediaTimeoutMs`, counted from now, and again after each later silence. It belongs
   * to whoever ends the call, for the session's whole life, so it survives the packets changing
   * owner (an agent leg, then a transfer's bridge). One watcher: a second is a bug and throws.
   * The returned function stops it; {@link close} does too.
   */
  watchMedia(onTimeout: (session: RtpSession) => void): () => void {
    if (this.#onMediaTimeout !== null) throw new InvariantError(`rtp ${this.localPort} has a media time-out watcher already`);
    this.#onMediaTimeout = onTimeout;
    if (!this.#closed) this.#silence.start();
    return () => {
      if (this.#onMediaTimeout !== onTimeout) return;
      this.#onMediaTimeout = null;
      this.#silence.stop();
    };
  }

  /** The far end from SDP: RTP address, and RTCP from a=rtcp (RFC 3605) or port+1, or the RTP port with rtcp-mux. */
  setRemote(rtp: MediaAddress, options: { rtcp?: MediaAddress; rtcpMux?: boolean } = {}): void {
    this.#stopRelays();
    // A new address in SDP (a re-INVITE after transfer) starts over: send there and latch afresh.
    // The same address again (a session refresh) keeps the latched NAT binding.
    if (this.#latch.signalled(rtp)) this.#remote = rtp;
    this.#rtcp.signalled(rtp, options);
  }

  /** Protects the stream with SRTP from now on (keys repeated from before keep their contexts), or stops (null). */
  setSrtp(keys: SrtpKeys | null): void {
    this.#stopRelays();
    this.#srtp = keys === null ? null : SrtpTransform.for(keys, this.#srtp);
  }

  /**
   * What we may send to the far end: RTP only where our negotiated direction is sendrecv or
   * sendonly (RFC 3264 §5.1: a recvonly or inactive side sends no media, but still RTCP), and
   * RTCP not at all toward an RFC 2543 hold address (c=0.0.0.0, RFC 3264 §8.4). Packets given to
   * {@link send} meanwhile are dropped uncounted, so producers keep their pace and resume seamlessly.
   */
  setSending(rtp: boolean, rtcp: boolean): void {
    this.#sendsRtp = rtp;
    this.#rtcp.sending = rtcp;
    // Relay rules into this session would send past the check in send().
    if (!rtp) this.#relay.stopInto();
  }

  /** Whether RTP goes out (see {@link setSending}). */
  get isSending(): boolean {
    return this.#sendsRtp;
  }

  get remote(): MediaAddress | null {
    return this.#remote;
  }

  get isLatched(): boolean {
    return this.#latch.latched !== null;
  }

  /**
   * Sends an RTP packet after rewriting its header for continuity (see {@link RtpSequencer});
   * `source` names the producer. The buffer must not be touched again by the caller.
   */
  send(packet: Buffer, source: number, advancesClock = true): void {
    const remote = this.#remote;
    if (remote === null || this.#closed || !this.#sendsRtp) return;
    // Packets relayed into this session moved its sequencer; they are reported in bulk.
    this.#rtp.catchUp();
    // Another source moves the sequencer's offsets, which relay rules into this session carry.
    this.#relay.stopIntoExcept(source);
    const now = this.#clock.monotonic();
    this.sequencer.rewrite(packet, source, now, advancesClock);
    this.#reporter.onRtpSent(packet.length - RTP_HEADER_SIZE, rtpTimestamp(packet), now);
    this.#rtp.send(this.#srtp ? this.#srtp.sender.protectRtp(packet) : packet, remote.port, remote.address);
  }

  stats(): RtpSessionStats {
    this.#rtp.catchUp();
    return {
      localPort: this.localPort,
      remote: this.#remote,
      latched: this.isLatched,
      packetsSent: this.#reporter.packetsSent,
      octetsSent: this.#reporter.octetsSent,
      packetsReceived: this.#accepted,
      octetsReceived: this.#octetsAccepted,
      longestReceiveGapMs: this.#silence.longestGapMs,
      longestSendGapMs: this.#reporter.longestSendGapMs,
      packetsRejected: this.#rejected,
      rtcpRejected: this.#rtcp.rejected,
      packetsInvalid: this.#invalid,
      srtpSuite: this.#srtp?.suite ?? null,
      packetsUnauthenticated: this.#unauthenticated,
      rtcpUnauthenticated: this.#rtcp.unauthenticated,
      reception: this.#reporter.receptionSnapshot(),
      remoteReport: this.#reporter.remote,
    };
  }

  /**
   * Relays the far end's stream `ssrc` (audio of `payloadType`) to `target` inside the media I/O,
   * without JavaScript per packet, as `outPayloadType` and with the header `target`'s sequencer
   * would write. Only what needs nothing else qualifies (see native/media-io); everything else still
   * comes through {@link RtpSessionOwner.onRtp}. Relayed packets count in both sessions' statistics
   * as if they had gone through {@link send}. False when it cannot be done: node:dgram sockets, SRTP
   * on either session, this session not latched or `target` without a far end, or `target`'s
   * sequencer not on this stream (so the first packet of a stream always goes through JavaScript).
   * Lasts until {@link stopRelay}, or until either session changes its far end, keys or sources.
   */
  relayTo(target: RtpSession, stream: RelayedStream): boolean {
    const peer = this.#remote;
    const destination = target.#remote;
    if (this.#closed || target.#closed || this.#srtp || target.#srtp || !this.isLatched || peer === null || destination === null || !target.#sendsRtp) return false;
    this.#rtp.catchUp();
    return this.#relay.start(target.#relay, peer, destination, stream);
  }

  /** Whether {@link relayTo}'s rule is in place. */
  get relaying(): boolean {
    return this.#relay.active;
  }

  /** RTP packets this session received that the media I/O relayed by {@link relayTo}'s rule. */
  get relayedPackets(): number {
    this.#rtp.catchUp();
    return this.#relay.packets;
  }

  /** Every packet comes through JavaScript again from the next read on. */
  stopRelay(): void {
    this.#relay.stop();
  }

  /** Stops this session's relay and those into it: its far end, keys or socket change. */
  #stopRelays(): void {
    this.#relay.stopAll();
  }

  describe(): string {
    const remote = this.#remote ? `${this.#remote.address}:${this.#remote.port}` : 'no remote';
    return `rtp ${this.localPort} -> ${remote}${this.isLatched ? ' (latched)' : ''}${this.#rtcp.muxed ? ' rtcp-mux' : ''}${this.#srtp ? ' srtp' : ''}`;
  }

  /** Idempotent: stops timers, closes both sockets and returns the port to the pool. */
  close(): void {
    if (this.#closed) return;
    this.#stopRelays();
    this.#closed = true;
    this.#silence.stop();
    this.#rtcp.close();
    this.#rtp.close();
    this.#ports.release(this.localPort);
    this.#owner = NO_OWNER;
    this.#onMediaTimeout = null;
  }

  readonly #onRtpDatagram = (datagram: Buffer, address: string, port: number): void => {
    // RFC 5761 §4: with rtcp-mux, RTCP arrives on the RTP port and is told apart by its type.
    if (isRtcpPacket(datagram)) return this.#rtcp.receive(datagram, address, port);
    if (datagram.length < RTP_HEADER_SIZE || datagram[0]! >> 6 !== 2) {
      this.#invalid++;
      this.#refusals?.refused('invalid');
      return;
    }
    // RFC 3711 §3.3: authenticate (and drop replays) before the packet can latch or count.
    const msg = this.#srtp ? this.#srtp.receiver.unprotectRtp(datagram) : datagram;
    if (msg === null) {
      this.#unauthenticated++;
      this.#refusals?.refused('unauthenticated');
      return;
    }
    const now = this.#clock.monotonic();
    const ssrc = rtpSsrc(msg);
    const verdict = this.#latch.admit(address, port, ssrc, rtpSequenceNumber(msg), rtpPayloadOffset(msg) >= 0, now - this.#silence.lastHeardAt);
    if (verdict === 'learned') this.#follow(address, port);
    else if (verdict !== 'taken') return this.#refuse(verdict);
    this.#silence.heard(now);
    this.#accepted++;
    this.#octetsAccepted += msg.length - RTP_HEADER_SIZE;
    this.#reporter.onRtpReceived(ssrc, rtpSequenceNumber(msg), rtpTimestamp(msg), now);
    this.#owner.onRtp?.(msg, this);
  };

  /** A packet the media I/O relayed by this session's rule: what {@link send} and the RTP path would have counted. */
  readonly #onRelayed = (sequenceNumber: number, timestamp: number, ssrc: number, length: number, ageMs: number): void => {
    // Reported in bulk: counted as of its arrival, as the RFC 3550 jitter estimate needs.
    const now = this.#clock.monotonic() - ageMs;
    this.#silence.heard(now);
    this.#accepted++;
    this.#octetsAccepted += length - RTP_HEADER_SIZE;
    this.#latch.noteTaken(ssrc, sequenceNumber);
    this.#reporter.onRtpReceived(ssrc, sequenceNumber, timestamp, now);
    this.#relay.relayed(sequenceNumber, timestamp, length, now);
  };

  /** Symmetric RTP (RFC 4961 §3): media goes to the source just latched, RTCP to its port+1 unless muxed. */
  #follow(address: string, port: number): void {
    // Rules into and out of this session name its far end; latching to the address already in use changes none.
    if (this.#remote?.address !== address || this.#remote.port !== port) this.#stopRelays();
    this.#remote = { address, port };
    this.#rtcp.follow(address, port);
    this.#owner.onLatched?.(address, port, this);
  }

  /** A refused RTP datagram: counted, never passed on, never answered. */
  #refuse(reason: RtpRefusalReason): void {
    this.#rejected++;
    this.#refusals?.refused(reason);
  }
}
