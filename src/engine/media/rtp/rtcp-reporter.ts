/** @module Per-session RTCP state: what we sent, what we received, what the far end reported (RFC 3550 §6.4). */
import { buildCompoundReport, ntpMiddle32, parseRtcpReports, type OutgoingReportBlock } from './rtcp.js';
import { ReceptionStats, type ReceptionSnapshot } from './reception-stats.js';

/** What the far end says about our stream, from its last SR or RR (RFC 3550 §6.4.1). */
export interface RemoteReport {
  fractionLost: number;
  cumulativeLost: number;
  jitterMs: number;
  /** Round-trip time from LSR and DLSR (RFC 3550 §6.4.1, Figure 2); null before we sent an SR. */
  rttMs: number | null;
}

/** Counters of our own stream, for the sender info of an SR. */
export interface SenderCounters {
  packetsSent: number;
  octetsSent: number;
}

/**
 * Accumulates the numbers that go into our reports and reads the far end's. Time comes in as
 * arguments (wall ms for NTP, monotonic ms for DLSR) so the clock stays injectable.
 */
export class RtcpReporter {
  readonly reception: ReceptionStats;
  readonly #clockRate: number;
  readonly #cname: string;
  packetsSent = 0;
  octetsSent = 0;
  lastRtpTimestamp = 0;
  #lastRtpSentAtMs = 0;
  /** The longest time between two packets we sent (monotonic ms), for call quality: a silence the far end heard. */
  longestSendGapMs = 0;
  #sentSinceReport = false;
  #receivedSinceReport = false;
  /** Middle 32 bits of the last SR's NTP time, and when it arrived (monotonic), for LSR/DLSR. */
  #lastSrNtp = 0;
  #lastSrArrivalMs = 0;
  #remote: RemoteReport | null = null;

  constructor(clockRate: number, cname: string) {
    this.#clockRate = clockRate;
    this.#cname = cname;
    this.reception = new ReceptionStats(clockRate);
  }

  get remote(): RemoteReport | null {
    return this.#remote;
  }

  onRtpSent(octets: number, rtpTimestamp: number, nowMs: number): void {
    if (this.packetsSent > 0 && nowMs - this.#lastRtpSentAtMs > this.longestSendGapMs) this.longestSendGapMs = nowMs - this.#lastRtpSentAtMs;
    this.packetsSent++;
    this.octetsSent += octets;
    this.lastRtpTimestamp = rtpTimestamp;
    this.#lastRtpSentAtMs = nowMs;
    this.#sentSinceReport = true;
  }

  onRtpReceived(ssrc: number, seq: number, ts: number, nowMs: number): void {
    if (this.reception.update(ssrc, seq, ts, nowMs)) this.#receivedSinceReport = true;
  }

  /** The next compound report, or null when there is nothing to say. */
  buildReport(ssrc: number, wallMs: number, nowMs: number): Buffer | null {
    const reports: OutgoingReportBlock[] = [];
    if (this.#receivedSinceReport) {
      const dlsr = this.#lastSrNtp === 0 ? 0 : Math.round(((nowMs - this.#lastSrArrivalMs) / 1000) * 65536);
      reports.push({ ...this.reception.reportBlock(), lastSr: this.#lastSrNtp, delaySinceLastSr: dlsr });
    }
    // RFC 3550 §6.4: an SR when we sent data since the last report, an RR otherwise.
    const senderInfo = this.#sentSinceReport
      ? {
          ntpMs: wallMs,
          // The RTP time of "now", extrapolated from the last packet we sent (RFC 3550 §6.4.1).
          rtpTimestamp: (this.lastRtpTimestamp + Math.round(((nowMs - this.#lastRtpSentAtMs) * this.#clockRate) / 1000)) >>> 0,
          packetCount: this.packetsSent,
          octetCount: this.octetsSent,
        }
      : null;
    if (!senderInfo && reports.length === 0) return null;
    this.#sentSinceReport = false;
    this.#receivedSinceReport = false;
    return buildCompoundReport({ ssrc, cname: this.#cname, senderInfo, reports });
  }

  /** Reads an incoming compound packet: remembers SRs for LSR and keeps the block about `ourSsrc`. */
  onRtcp(buf: Buffer, ourSsrc: number, wallMs: number, nowMs: number): void {
    for (const report of parseRtcpReports(buf)) {
      if (report.senderInfo) {
        this.#lastSrNtp = ntpMiddle32(report.senderInfo.ntpMs);
        this.#lastSrArrivalMs = nowMs;
      }
      const block = report.reports.find((r) => r.ssrc === ourSsrc);
      if (!block) continue;
      let rttMs: number | null = null;
      if (block.lastSr !== 0) {
        // RTT = A - LSR - DLSR, in 1/65536 s units of the middle 32 NTP bits.
        const units = (ntpMiddle32(wallMs) - block.lastSr - block.delaySinceLastSr) >>> 0;
        rttMs = units < 0x80000000 ? (units / 65536) * 1000 : 0;
      }
      this.#remote = {
        fractionLost: block.fractionLost / 256,
        cumulativeLost: block.cumulativeLost,
        jitterMs: (block.jitter * 1000) / this.#clockRate,
        rttMs,
      };
    }
  }

  receptionSnapshot(): ReceptionSnapshot {
    return this.reception.snapshot();
  }
}
