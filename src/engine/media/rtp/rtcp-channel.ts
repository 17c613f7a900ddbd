/**
 * @module The RTCP half of an RTP session: where reports go (port+1, the a=rtcp port of RFC 3605,
 * or the RTP port with rtcp-mux, RFC 5761), following the latched host's RTCP source (RFC 4961),
 * the randomized report interval (RFC 3550 §6.3.1), and reports received after the source check
 * and SRTCP authentication. Apart from rtp-session.ts because none of it is on the per-packet RTP
 * path; what is in the reports is {@link RtcpReporter}'s.
 */
import type { Clock, TimerHandle } from '../../../common/clock.js';
import type { SrtpTransform } from '../srtp/srtp-transform.js';
import type { MediaSocket } from './media-socket.js';
import type { RtcpReporter } from './rtcp-reporter.js';
import type { MediaAddress } from './rtp-session-types.js';
import type { RtpSequencer } from './sequencer.js';
import type { RtpRefusalCounter, SourceLatch } from './source-latch.js';

/** What the channel reads from its RTP session each time it sends or receives: both change over the session's life. */
export interface RtcpChannelHost {
  /** The far end's RTP address, where reports go with rtcp-mux. */
  remote(): MediaAddress | null;
  /** The session's SRTP keys, which protect RTCP as well (RFC 3711 §3.4), or null. */
  srtp(): SrtpTransform | null;
}

/** What an {@link RtcpChannel} shares with its RTP session. */
export interface RtcpChannelOptions {
  host: RtcpChannelHost;
  /** The RTP socket: reports go out on it with rtcp-mux, and relayed packets are caught up on it before a report. */
  rtp: MediaSocket;
  /** The RTCP socket on port+1, or null for a session bound for rtcp-mux only. */
  rtcp: MediaSocket | null;
  clock: Clock;
  reporter: RtcpReporter;
  latch: SourceLatch;
  /** Our stream, whose SSRC the reports carry. */
  sequencer: RtpSequencer;
  /** Mean report interval; 0 sends none. */
  intervalMs: number;
  refusals: RtpRefusalCounter | undefined;
}

/** Sends our reports and takes the far end's for one RTP session; closed with it. */
export class RtcpChannel {
  /** What the negotiated direction lets us send: no RTCP toward an RFC 2543 hold address (RFC 3264 §8.4). */
  sending = true;
  readonly #options: RtcpChannelOptions;
  #remote: MediaAddress | null = null;
  #mux = false;
  #timer: TimerHandle | null = null;
  #closed = false;
  #rejected = 0;
  #unauthenticated = 0;

  constructor(options: RtcpChannelOptions) {
    this.#options = options;
    if (options.rtcp !== null) options.rtcp.onDatagram = this.receive;
    if (options.intervalMs > 0) this.#arm();
  }

  /** Whether RTCP shares the RTP port (RFC 5761). */
  get muxed(): boolean {
    return this.#mux;
  }

  /** RTCP refused for its source (not the latched host). */
  get rejected(): number {
    return this.#rejected;
  }

  /** RTCP that failed SRTCP authentication. */
  get unauthenticated(): number {
    return this.#unauthenticated;
  }

  /** The far end from SDP: RTCP at a=rtcp (RFC 3605) or RTP port+1, or on the RTP port with rtcp-mux (always without an RTCP socket). */
  signalled(rtp: MediaAddress, options: { rtcp?: MediaAddress; rtcpMux?: boolean }): void {
    this.#mux = (options.rtcpMux ?? false) || this.#options.rtcp === null;
    this.#remote = this.#mux ? null : (options.rtcp ?? { address: rtp.address, port: rtp.port + 1 });
  }

  /** RTP latched to a new source (RFC 4961 §3): RTCP goes to its port+1 unless muxed. */
  follow(address: string, port: number): void {
    if (!this.#mux) this.#remote = { address, port: port + 1 };
  }

  /** One RTCP datagram, from the RTCP socket or told apart on the RTP port (RFC 5761 §4). */
  readonly receive = (datagram: Buffer, address: string, port: number): void => {
    const { latch, refusals, host, clock } = this.#options;
    if (!latch.acceptsRtcpFrom(address)) {
      this.#rejected++;
      refusals?.refused('rtcp-source');
      return;
    }
    const srtp = host.srtp();
    const msg = srtp ? srtp.receiver.unprotectRtcp(datagram) : datagram;
    if (msg === null) {
      this.#unauthenticated++;
      refusals?.refused('unauthenticated');
      return;
    }
    // RFC 4961: RTCP is symmetric too; follow its source once RTP has latched, from the latched host only.
    const latched = latch.latched;
    if (latched !== null && !this.#mux && address === latched.address) this.#remote = { address, port };
    this.#options.reporter.onRtcp(msg, this.#options.sequencer.ssrc, clock.now(), clock.monotonic());
  };

  /** Stops the reports and closes the RTCP socket, if any. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#timer?.cancel();
    this.#options.rtcp?.close();
  }

  /** RFC 3550 §6.3.1: the interval is randomized over [0.5, 1.5] of the mean to avoid synchronization. */
  #arm(): void {
    const interval = this.#options.intervalMs * (0.5 + Math.random());
    this.#timer = this.#options.clock.setTimeout(() => {
      if (this.#closed) return;
      this.#send();
      this.#arm();
    }, interval);
  }

  #send(): void {
    const { host, rtp, rtcp, clock } = this.#options;
    const target = this.#mux ? host.remote() : this.#remote;
    if (target === null || !this.sending) return;
    rtp.catchUp();
    const report = this.#options.reporter.buildReport(this.#options.sequencer.ssrc, clock.now(), clock.monotonic());
    if (report === null) return;
    const srtp = host.srtp();
    const packet = srtp ? srtp.sender.protectRtcp(report) : report;
    (this.#mux || rtcp === null ? rtp : rtcp).send(packet, target.port, target.address);
  }
}
