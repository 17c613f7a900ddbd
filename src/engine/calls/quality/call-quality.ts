/**
 * @module Call quality kept with the CDR (docs/API.md "Call quality"): the figures of each RTP leg
 * of a call when it ends (the carrier's, a sip_trunk agent's, a transfer target's), an estimated
 * MOS per leg from the G.107 E-model, and a streaming agent's frame counters. Built from counters
 * the media path keeps anyway: nothing here runs per packet.
 */
import { eModelRating, G711_PLC, mosFromRating, type RtpSessionStats } from '../../media/index.js';
import type { AgentMediaLegStats } from '../session-snapshot.js';

/** Which leg of the call: the carrier's, the agent edge's (sip_trunk), or a bridge transfer's target. */
export type QualityLegName = 'carrier' | 'agent' | 'transfer_target';

/** One RTP leg's figures over its life, seen from the gateway. */
export interface LegQuality {
  leg: QualityLegName;
  codec: string;
  srtp: boolean;
  packets_sent: number;
  octets_sent: number;
  packets_received: number;
  octets_received: number;
  /** Packets the far end sent that never reached us (RFC 3550 A.3, our count). */
  packets_lost: number;
  /** Packets of ours the far end reports lost in its last RTCP report block (RFC 3550 §6.4.1); null without one. */
  packets_lost_reported: number | null;
  /** Interarrival jitter (RFC 3550 A.8) of what we received: the estimate's mean over the call and its maximum. */
  jitter_mean_ms: number;
  jitter_max_ms: number;
  /** Round-trip time from the far end's last report on our SR (RFC 3550 §6.4.1); null without one. */
  rtt_ms: number | null;
  /** The longest time without a packet from the far end, and without one from us. */
  longest_silence_received_ms: number;
  longest_silence_sent_ms: number;
  /** Estimated MOS (G.107 E-model, G.711 with PLC per G.113 Appendix I), 1 to 4.5; see {@link estimateMos}. */
  mos: number;
}

/** A streaming agent's audio (WebSocket or platform): frames each way, what was lost, and its timing. */
export interface AgentStreamQuality {
  frames_to_agent: number;
  frames_to_agent_dropped: number;
  frames_from_agent: number;
  frames_from_agent_dropped: number;
  playout_underruns: number;
  largest_agent_audio_gap_ms: number;
  /** From the answer to the agent's first audio; null when it sent none. */
  first_agent_audio_ms: number | null;
}

/** What the CDR keeps about a call's media; null for a call that was never answered. */
export interface CallQuality {
  legs: LegQuality[];
  agent_stream: AgentStreamQuality | null;
}

/** The packetization time of our streams (20 ms frames), the delay every packet adds at least once. */
const PACKETIZATION_MS = 20;

/**
 * The E-model estimate of one leg (docs/DECISIONS.md "Call quality estimate"): Ppl is the worse
 * of the loss we counted and the loss the far end reported of our stream; the one-way delay is
 * half the RTCP round trip (0 without one), plus one packetization time, plus twice the mean
 * jitter, the depth a jitter buffer needs to absorb it. Every other parameter is G.107's default.
 */
export function estimateMos(p: { lossPercent: number; rttMs: number | null; meanJitterMs: number }): number {
  const Ta = (p.rttMs ?? 0) / 2 + PACKETIZATION_MS + 2 * p.meanJitterMs;
  const R = eModelRating({ ...G711_PLC, Ppl: Math.max(0, Math.min(100, p.lossPercent)), T: Ta, Ta, Tr: 2 * Ta });
  return Math.round(mosFromRating(R) * 100) / 100;
}

const round1 = (x: number): number => Math.round(x * 10) / 10;

/** One leg's quality from its RTP session's statistics at the end of the call. */
export function legQuality(leg: QualityLegName, codec: string, stats: RtpSessionStats): LegQuality {
  const { reception, remoteReport } = stats;
  const receivedLoss = reception.packetsExpected > 0 ? (100 * reception.packetsLost) / reception.packetsExpected : 0;
  const reportedLost = remoteReport === null ? null : Math.max(0, remoteReport.cumulativeLost);
  const sentLoss = reportedLost !== null && stats.packetsSent > 0 ? (100 * reportedLost) / stats.packetsSent : 0;
  return {
    leg, codec, srtp: stats.srtpSuite !== null,
    packets_sent: stats.packetsSent, octets_sent: stats.octetsSent,
    packets_received: stats.packetsReceived, octets_received: stats.octetsReceived,
    packets_lost: reception.packetsLost, packets_lost_reported: reportedLost,
    jitter_mean_ms: round1(reception.meanJitterMs), jitter_max_ms: round1(reception.maxJitterMs),
    rtt_ms: remoteReport?.rttMs == null ? null : round1(remoteReport.rttMs),
    longest_silence_received_ms: Math.round(stats.longestReceiveGapMs), longest_silence_sent_ms: Math.round(stats.longestSendGapMs),
    mos: estimateMos({ lossPercent: Math.max(receivedLoss, sentLoss), rttMs: remoteReport?.rttMs ?? null, meanJitterMs: reception.meanJitterMs }),
  };
}

/** A streaming agent's counters at the end of the call. */
export function agentStreamQuality(stats: AgentMediaLegStats): AgentStreamQuality {
  return {
    frames_to_agent: stats.framesToAgent, frames_to_agent_dropped: stats.framesToAgentDropped,
    frames_from_agent: stats.agentChunks, frames_from_agent_dropped: stats.agentChunksDiscarded,
    playout_underruns: stats.underruns, largest_agent_audio_gap_ms: Math.round(stats.largestAgentAudioGapMs),
    first_agent_audio_ms: stats.firstAgentAudioMs === null ? null : Math.round(stats.firstAgentAudioMs),
  };
}
