/** @module One RTP/RTCP endpoint: port pair, symmetric latching, header continuity, reports, media timeout. */
import type { Clock, TimerHandle } from '../../../common/clock.js';
import { LatchCandidate } from './latch-candidate.js';
import { isRtcpPacket, rtpPayloadOffset, rtpSequenceNumber, rtpSsrc, rtpTimestamp, RTP_HEADER_SIZE } from './packet.js';
import { isPortsExhausted, type PortPool, type PortsExhausted } from './port-pool.js';
import { RtcpReporter, type RemoteReport } from './rtcp-reporter.js';
import type { ReceptionSnapshot } from './reception-stats.js';
import { RtpSequencer } from './sequencer.js';
import { openMediaSocket, type MediaSocket } from './media-socket.js';
import { SrtpTransform, type SrtpKeys } from '../srtp/srtp-transform.js';

/** Options of {@link RtpSession.open}; times in milliseconds. */
export interface RtpSessionOptions {
  clock: Clock;
  ports: PortPool;
  /** Local address to bind (the address we put in SDP, or 0.0.0.0). */
  bindAddress: string;
  clockRate?: number;
  samplesPerPacket?: number;
  /** Silence after which {@link RtpSessionDelegate.onMediaTimeout} fires; 0 disables. */
  mediaTimeoutMs?: number;
  /** Mean RTCP report interval (RFC 3550 §6.2 recommends 5 s minimum); 0 disables. */
  rtcpIntervalMs?: number;
  /**
   * Bind no RTCP socket on port+1: RTCP goes out and comes in on the RTP port (RFC 5761), as for
   * legs that require rtcp-mux. Port+1 stays reserved in the pool either way.
   */
  muxOnly?: boolean;
  /** A latched source silent this long may be replaced by a new one (see {@link RtpSession}). */
  relatchIdleMs?: number;
  cname?: string;
}

/** Events of a session. Optional methods, so the owner implements only what it needs. */
export interface RtpSessionDelegate {
  /** An accepted RTP packet. `packet` may be rewritten in place and passed to another session's send. */
  onRtp?(packet: Buffer, session: RtpSession): void;
  onMediaTimeout?(session: RtpSession): void;
  onLatched?(address: string, port: number, session: RtpSession): void;
}

/** A transport address. */
export interface MediaAddress {
  address: string;
  port: number;
}

/** Per-session numbers for call detail records and metrics. */
export interface RtpSessionStats {
  localPort: number;
  remote: MediaAddress | null;
  latched: boolean;
  packetsSent: number;
  octetsSent: number;
  /** RTP packets accepted from the far end, across all its SSRCs. */
  packetsReceived: number;
  /** Packets dropped because they came from an address we are not latched to (or had no valid header to latch on). */
  packetsRejected: number;
  /** Datagrams on the RTP port that are neither RTP version 2 nor RTCP (too short, another version). */
  packetsInvalid: number;
  /** The SRTP suite in use, or null for plain RTP. */
  srtpSuite: string | null;
  /** SRTP packets dropped for a wrong authentication tag or as replays (RFC 3711 §3.3). */
  packetsUnauthenticated: number;
  /** The same for RTCP: SRTCP that fails, and RTCP sent in the clear (some peers send clear keep-alives). */
  rtcpUnauthenticated: number;
  reception: ReceptionSnapshot;
  remoteReport: RemoteReport | null;
}

/**
 * One media stream endpoint on an even port (RTCP on port+1, or on the same port with rtcp-mux,
 * RFC 5761). Until the first packet it sends to the address from SDP; then it latches to the
 * packet's source (symmetric RTP, RFC 4961), which crosses NATs whose SDP lies. The latched
 * transport address is the far end: its packets are taken whatever their SSRC. From any other
 * address, the latched SSRC is refused while the latched source is active (RFC 3550 §8.2: a loop
 * or a collision). A new source moves the latch only after {@link LATCH_PROBATION} packets in
 * sequence from one address with one SSRC, and then only if its SSRC differs from the latched
 * one (a transferred source) or the latched source went silent for `relatchIdleMs` (a NAT
 * rebinding). So random, malformed or stray datagrams never steal the stream; a sender that
 * knows the port and sends a well-formed RTP stream under a new SSRC can, as symmetric RTP
 * without SRTP allows. With SRTP ({@link RtpSession.setSrtp}) every packet is authenticated
 * before anything else looks at it, so only the keyholder can latch.
 */
export class RtpSession {
  delegate: RtpSessionDelegate = {};
  readonly localPort: number;
  readonly sequencer: RtpSequencer;
  readonly #rtp: MediaSocket;
  readonly #rtcp: MediaSocket | null;
  readonly #clock: Clock;
  readonly #ports: PortPool;
  readonly #reporter: RtcpReporter;
  readonly #mediaTimeoutMs: number;
  readonly #rtcpIntervalMs: number;
  readonly #relatchIdleMs: number;
  #remote: MediaAddress | null = null;
  #sdpRemote: MediaAddress | null = null;
  #remoteRtcp: MediaAddress | null = null;
  #rtcpMux = false;
  #latched = false;
  #latchedSsrc = 0;
  readonly #candidate = new LatchCandidate();
  #lastRtpAtMs: number;
  #rejected = 0;
  #invalid = 0;
  #accepted = 0;
  #unauthenticated = 0;
  #rtcpUnauthenticated = 0;
  #srtp: SrtpTransform | null = null;
  #timeoutTimer: TimerHandle | null = null;
  #rtcpTimer: TimerHandle | null = null;
  #timedOut = false;
  #closed = false;

  private constructor(rtp: MediaSocket, rtcp: MediaSocket | null, port: number, options: RtpSessionOptions) {
    this.#rtp = rtp;
    this.#rtcp = rtcp;
    this.localPort = port;
    this.#clock = options.clock;
    this.#ports = options.ports;
    const clockRate = options.clockRate ?? 8000;
    this.sequencer = new RtpSequencer({ clockRate, samplesPerPacket: options.samplesPerPacket ?? clockRate / 50 });
    this.#reporter = new RtcpReporter(clockRate, options.cname ?? `vgw-${port}@${options.bindAddress}`);
    this.#mediaTimeoutMs = options.mediaTimeoutMs ?? 0;
    this.#rtcpIntervalMs = options.rtcpIntervalMs ?? 5000;
    this.#relatchIdleMs = options.relatchIdleMs ?? 1000;
    this.#lastRtpAtMs = this.#clock.monotonic();
    rtp.onDatagram = this.#onRtpDatagram;
    if (rtcp !== null) rtcp.onDatagram = this.#onRtcpDatagram;
    if (this.#mediaTimeoutMs > 0) this.#armTimeout(this.#mediaTimeoutMs);
    if (this.#rtcpIntervalMs > 0) this.#armRtcp();
  }

  /** Binds an RTP/RTCP port pair from the pool, skipping ports another process holds. */
  static async open(options: RtpSessionOptions): Promise<RtpSession | PortsExhausted> {
    for (let attempt = 0; attempt < 16; attempt++) {
      const port = options.ports.allocate();
      if (isPortsExhausted(port)) return port;
      let rtp: MediaSocket | null = null;
      try {
        rtp = await openMediaSocket(options.bindAddress, port);
        const rtcp = options.muxOnly ? null : await openMediaSocket(options.bindAddress, port + 1);
        return new RtpSession(rtp, rtcp, port, options);
      } catch {
        rtp?.close();
        options.ports.release(port);
      }
    }
    return { error: 'ports-exhausted' };
  }

  /** The far end from SDP: RTP address, and RTCP from a=rtcp (RFC 3605) or port+1, or the RTP port with rtcp-mux. */
  setRemote(rtp: MediaAddress, options: { rtcp?: MediaAddress; rtcpMux?: boolean } = {}): void {
    this.#rtcpMux = (options.rtcpMux ?? false) || this.#rtcp === null;
    // A new address in SDP (a re-INVITE after transfer) starts over: send there and latch afresh.
    // The same address again (a session refresh) keeps the latched NAT binding.
    const previous = this.#sdpRemote;
    if (previous === null || previous.address !== rtp.address || previous.port !== rtp.port) {
      this.#latched = false;
      this.#candidate.reset();
      this.#remote = rtp;
    }
    this.#sdpRemote = rtp;
    this.#remoteRtcp = this.#rtcpMux ? null : (options.rtcp ?? { address: rtp.address, port: rtp.port + 1 });
  }

  /** Protects the stream with SRTP from now on (keys repeated from before keep their contexts), or stops (null). */
  setSrtp(keys: SrtpKeys | null): void {
    this.#srtp = keys === null ? null : SrtpTransform.for(keys, this.#srtp);
  }

  get remote(): MediaAddress | null {
    return this.#remote;
  }

  get isLatched(): boolean {
    return this.#latched;
  }

  /**
   * Sends an RTP packet after rewriting its header for continuity (see {@link RtpSequencer});
   * `source` names the producer. The buffer must not be touched again by the caller.
   */
  send(packet: Buffer, source: number, advancesClock = true): void {
    const remote = this.#remote;
    if (remote === null || this.#closed) return;
    const now = this.#clock.monotonic();
    this.sequencer.rewrite(packet, source, now, advancesClock);
    this.#reporter.onRtpSent(packet.length - RTP_HEADER_SIZE, rtpTimestamp(packet), now);
    this.#rtp.send(this.#srtp ? this.#srtp.sender.protectRtp(packet) : packet, remote.port, remote.address);
  }

  stats(): RtpSessionStats {
    return {
      localPort: this.localPort,
      remote: this.#remote,
      latched: this.#latched,
      packetsSent: this.#reporter.packetsSent,
      octetsSent: this.#reporter.octetsSent,
      packetsReceived: this.#accepted,
      packetsRejected: this.#rejected,
      packetsInvalid: this.#invalid,
      srtpSuite: this.#srtp?.suite ?? null,
      packetsUnauthenticated: this.#unauthenticated,
      rtcpUnauthenticated: this.#rtcpUnauthenticated,
      reception: this.#reporter.receptionSnapshot(),
      remoteReport: this.#reporter.remote,
    };
  }

  describe(): string {
    const remote = this.#remote ? `${this.#remote.address}:${this.#remote.port}` : 'no remote';
    return `rtp ${this.localPort} -> ${remote}${this.#latched ? ' (latched)' : ''}${this.#rtcpMux ? ' rtcp-mux' : ''}${this.#srtp ? ' srtp' : ''}`;
  }

  /** Idempotent: stops timers, closes both sockets and returns the port to the pool. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#timeoutTimer?.cancel();
    this.#rtcpTimer?.cancel();
    this.#rtp.close();
    this.#rtcp?.close();
    this.#ports.release(this.localPort);
  }

  readonly #onRtpDatagram = (datagram: Buffer, address: string, port: number): void => {
    // RFC 5761 §4: with rtcp-mux, RTCP arrives on the RTP port and is told apart by its type.
    if (isRtcpPacket(datagram)) return this.#onRtcpDatagram(datagram, address, port);
    if (datagram.length < RTP_HEADER_SIZE || datagram[0]! >> 6 !== 2) {
      this.#invalid++;
      return;
    }
    // RFC 3711 §3.3: authenticate (and drop replays) before the packet can latch or count.
    const msg = this.#srtp ? this.#srtp.receiver.unprotectRtp(datagram) : datagram;
    if (msg === null) {
      this.#unauthenticated++;
      return;
    }
    const now = this.#clock.monotonic();
    const ssrc = rtpSsrc(msg);
    if (!this.#acceptSource(msg, address, port, ssrc, now)) {
      this.#rejected++;
      return;
    }
    this.#lastRtpAtMs = now;
    this.#accepted++;
    if (this.#timedOut) {
      this.#timedOut = false;
      this.#armTimeout(this.#mediaTimeoutMs);
    }
    this.#reporter.onRtpReceived(ssrc, rtpSequenceNumber(msg), rtpTimestamp(msg), now);
    this.delegate.onRtp?.(msg, this);
  };

  /** Symmetric RTP latching, RFC 4961 §3; see the class comment for the re-latch rule. */
  #acceptSource(msg: Buffer, address: string, port: number, ssrc: number, now: number): boolean {
    const remote = this.#remote;
    if (this.#latched && remote !== null && port === remote.port && address === remote.address) {
      // The far end may change its SSRC (RFC 3550 §8.2); the loop check below compares with its current one.
      this.#latchedSsrc = ssrc;
      return true;
    }
    // Only a well-formed header may latch; the latched source's own malformed packets go on to the owner, which counts them.
    if (rtpPayloadOffset(msg) < 0) return false;
    if (this.#latched) {
      const active = now - this.#lastRtpAtMs < this.#relatchIdleMs;
      if (ssrc === this.#latchedSsrc && active) return false;
      if (!this.#candidate.observe(address, port, ssrc, rtpSequenceNumber(msg))) return false;
    }
    this.#candidate.reset();
    this.#latched = true;
    this.#latchedSsrc = ssrc;
    this.#remote = { address, port };
    if (!this.#rtcpMux) this.#remoteRtcp = { address, port: port + 1 };
    this.delegate.onLatched?.(address, port, this);
    return true;
  }

  readonly #onRtcpDatagram = (datagram: Buffer, address: string, port: number): void => {
    const msg = this.#srtp ? this.#srtp.receiver.unprotectRtcp(datagram) : datagram;
    if (msg === null) {
      this.#rtcpUnauthenticated++;
      return;
    }
    // RFC 4961: RTCP is symmetric too; follow its source once RTP has latched, from the latched host only.
    if (this.#latched && !this.#rtcpMux && address === this.#remote?.address) this.#remoteRtcp = { address, port };
    this.#reporter.onRtcp(msg, this.sequencer.ssrc, this.#clock.now(), this.#clock.monotonic());
  };

  #armTimeout(ms: number): void {
    this.#timeoutTimer = this.#clock.setTimeout(() => {
      if (this.#closed) return;
      const silent = this.#clock.monotonic() - this.#lastRtpAtMs;
      if (silent >= this.#mediaTimeoutMs) {
        // Fires once per silence; the next accepted packet re-arms the timer.
        this.#timedOut = true;
        this.delegate.onMediaTimeout?.(this);
      } else {
        this.#armTimeout(this.#mediaTimeoutMs - silent);
      }
    }, ms);
  }

  /** RFC 3550 §6.3.1: the interval is randomized over [0.5, 1.5] of the mean to avoid synchronization. */
  #armRtcp(): void {
    const interval = this.#rtcpIntervalMs * (0.5 + Math.random());
    this.#rtcpTimer = this.#clock.setTimeout(() => {
      if (this.#closed) return;
      this.#sendRtcp();
      this.#armRtcp();
    }, interval);
  }

  #sendRtcp(): void {
    const target = this.#rtcpMux ? this.#remote : this.#remoteRtcp;
    if (target === null) return;
    const report = this.#reporter.buildReport(this.sequencer.ssrc, this.#clock.now(), this.#clock.monotonic());
    if (report === null) return;
    const packet = this.#srtp ? this.#srtp.sender.protectRtcp(report) : report;
    (this.#rtcpMux || this.#rtcp === null ? this.#rtp : this.#rtcp).send(packet, target.port, target.address);
  }
}
