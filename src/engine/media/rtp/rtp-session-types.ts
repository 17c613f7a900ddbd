/** @module The options, events and figures of an {@link RtpSession}. */
import type { Clock } from '../../../common/clock.js';
import type { PortPool } from './port-pool.js';
import type { RemoteReport } from './rtcp-reporter.js';
import type { ReceptionSnapshot } from './reception-stats.js';
import type { RtpSession } from './rtp-session.js';
import type { RtpRefusalCounter } from './source-latch.js';

/** Options of {@link RtpSession.open}; times in milliseconds. */
export interface RtpSessionOptions {
  clock: Clock;
  ports: PortPool;
  /** Local address to bind (the address we put in SDP, or 0.0.0.0). */
  bindAddress: string;
  clockRate?: number;
  samplesPerPacket?: number;
  /** Silence after which the watcher of {@link RtpSession.watchMedia} is told; 0 disables. */
  mediaTimeoutMs?: number;
  /** Mean RTCP report interval (RFC 3550 §6.2 recommends 5 s minimum); 0 disables. */
  rtcpIntervalMs?: number;
  /**
   * Bind no RTCP socket on port+1: RTCP goes out and comes in on the RTP port (RFC 5761), as for
   * legs that require rtcp-mux. Port+1 stays reserved in the pool either way.
   */
  muxOnly?: boolean;
  /** The latched SSRC from another host may replace the latched source once it was silent this long (see `SourceLatch`). */
  relatchIdleMs?: number;
  /**
   * `rtp.strict_source` (default true): once latched, learn a new source only from the latched
   * host, the host the SDP named or `mediaNetworks` (docs/SECURITY.md "Media sources"). False:
   * from any host, after the same probation.
   */
  strictSource?: boolean;
  /** Addresses or CIDRs the far end's carrier sends media from (its `media_networks`). */
  mediaNetworks?: readonly string[];
  /** Where refused datagrams are counted, by reason. */
  refusals?: RtpRefusalCounter;
  cname?: string;
}

/**
 * What the one owner of a session hears (see {@link RtpSession.take}). Optional methods, so the
 * owner implements only what it needs.
 */
export interface RtpSessionOwner {
  /** An accepted RTP packet. `packet` may be rewritten in place and passed to another session's send. */
  onRtp?(packet: Buffer, session: RtpSession): void;
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
  /** Payload octets of those packets (RTP header excluded, as the SR's octet count, RFC 3550 §6.4.1). */
  octetsReceived: number;
  /** The longest time between two packets accepted from the far end, and between two we sent, in ms. */
  longestReceiveGapMs: number;
  longestSendGapMs: number;
  /** Packets dropped because they came from an address we are not latched to (or had no valid header to latch on). */
  packetsRejected: number;
  /** RTCP datagrams refused for their source host (strict source, docs/SECURITY.md "Media sources"). */
  rtcpRejected: number;
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
