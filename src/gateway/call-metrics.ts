/**
 * @module Prometheus metrics of the telephony side: live calls by direction, ended calls by end
 * reason, each carrier's OPTIONS keep-alive state (RFC 3261 11), for alerting on a dead trunk,
 * SIP messages dropped by flood protection, inbound SIP TCP/TLS connections open and refused, and
 * datagrams refused on media ports.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { CallRecord, CallRegistry } from '../engine/calls/index.js';
import type { RtpRefusalReason } from '../engine/media/index.js';
import type { AgentConnectObserver } from './checked-agent-link.js';

export interface CallMetrics {
  callEnded(call: CallRecord): void;
  carrierState(carrier: string, up: boolean, status: number): void;
  /** A SIP message dropped unread: over its source's rate limit, or over the size limit. */
  sipDropped(reason: 'rate-limit' | 'oversize'): void;
  /** An inbound SIP TCP/TLS connection over a cap, reset at once. */
  sipConnectionRefused(reason: 'max-connections' | 'max-connections-per-source'): void;
  /** A datagram a media port refused (docs/SECURITY.md "Media sources"): never relayed, recorded or answered. */
  rtpRefused(reason: RtpRefusalReason): void;
  /** A SIP message that could not be added to its call's trace, or a trace that could not be stored. */
  sipTraceFailed(what: 'record' | 'save' | 'hep'): void;
  /** A streaming agent's connection (the gateway's own protocol or a platform's) connected or failed. */
  agentConnect: AgentConnectObserver;
}

export function createCallMetrics(metrics: Registry, calls: () => CallRegistry | undefined, sipConnections: () => number = () => 0): CallMetrics {
  new Gauge({
    name: 'vgw_calls_live', help: 'Calls in progress on this node, by direction.', labelNames: ['direction'], registers: [metrics],
    collect() {
      this.reset();
      // Both directions always have a series, so a rate or an alert over them never sees a gap at 0.
      this.set({ direction: 'inbound' }, 0);
      this.set({ direction: 'outbound' }, 0);
      for (const live of calls()?.all() ?? []) this.inc({ direction: live.call.snapshot().direction });
    },
  });
  const ended = new Counter({
    name: 'vgw_calls_ended_total', help: 'Calls ended, by direction and end reason.', labelNames: ['direction', 'end_reason'], registers: [metrics],
  });
  const up = new Gauge({ name: 'vgw_carrier_up', help: 'Whether the carrier answered its last OPTIONS ping (1) or not (0).', labelNames: ['carrier'], registers: [metrics] });
  const status = new Gauge({ name: 'vgw_carrier_options_status', help: 'SIP status of the last OPTIONS answer (408 or 503 when none came).', labelNames: ['carrier'], registers: [metrics] });
  const dropped = new Counter({
    name: 'vgw_sip_dropped_total', help: 'SIP messages dropped before parsing: over the per-source rate limit, or over the size limit.', labelNames: ['reason'], registers: [metrics],
  });
  const refused = new Counter({
    name: 'vgw_sip_connections_refused_total', help: 'Inbound SIP TCP/TLS connections reset at once: over sip.tcp.max_connections or a per-source cap.', labelNames: ['reason'], registers: [metrics],
  });
  new Gauge({
    name: 'vgw_sip_connections_inbound', help: 'Inbound SIP TCP/TLS connections open (TLS handshakes in progress included).', registers: [metrics],
    collect() {
      this.set(sipConnections());
    },
  });
  const rtpRefused = new Counter({
    name: 'vgw_rtp_packets_refused_total', help: 'Datagrams refused on media ports, by reason (source, probation, ssrc-collision, malformed, rtcp-source, invalid, unauthenticated).',
    labelNames: ['reason'], registers: [metrics],
  });
  const quality = callQualityHistograms(metrics);
  const traceFailures = new Counter({
    name: 'vgw_sip_trace_failures_total', help: 'SIP messages not added to their call trace (record), call traces not stored (save), HEP3 datagrams not sent (hep).', labelNames: ['what'], registers: [metrics],
  });
  const agentConnect = agentConnectMetrics(metrics);
  return {
    agentConnect,
    sipTraceFailed: (what) => traceFailures.inc({ what }),
    rtpRefused: (reason) => rtpRefused.inc({ reason }),
    sipDropped: (reason) => dropped.inc({ reason }),
    sipConnectionRefused: (reason) => refused.inc({ reason }),
    callEnded: (call) => {
      ended.inc({ direction: call.direction, end_reason: call.end_reason ?? 'failed' });
      quality(call);
    },
    carrierState: (carrier, isUp, code) => {
      up.set({ carrier }, isUp ? 1 : 0);
      status.set({ carrier }, code);
    },
  };
}

/**
 * The CDR's call quality as histograms, one observation per RTP leg of an ended call, labelled by
 * leg (carrier, agent, transfer_target): the estimated MOS, the mean jitter and the loss ratio
 * (docs/API.md "Call quality").
 */
function callQualityHistograms(metrics: Registry): (call: CallRecord) => void {
  const labelNames = ['leg'] as const;
  const mos = new Histogram({
    name: 'vgw_call_mos', help: 'Estimated MOS (ITU-T G.107 E-model) of each RTP leg of ended calls.', labelNames,
    buckets: [1.5, 2, 2.5, 3, 3.5, 3.8, 4, 4.2, 4.4], registers: [metrics],
  });
  const jitter = new Histogram({
    name: 'vgw_call_jitter_seconds', help: 'Mean interarrival jitter (RFC 3550 A.8) of what each RTP leg of ended calls received.', labelNames,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.08, 0.16], registers: [metrics],
  });
  const loss = new Histogram({
    name: 'vgw_call_packet_loss_ratio', help: 'Share of the far end\'s RTP packets lost (RFC 3550 A.3), per RTP leg of ended calls.', labelNames,
    buckets: [0, 0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2], registers: [metrics],
  });
  return (call) => {
    for (const leg of call.quality?.legs ?? []) {
      const labels = { leg: leg.leg };
      mos.observe(labels, leg.mos);
      jitter.observe(labels, leg.jitter_mean_ms / 1000);
      const expected = leg.packets_received + leg.packets_lost;
      loss.observe(labels, expected === 0 ? 0 : leg.packets_lost / expected);
    }
  };
}

/** Time to connect a streaming agent (answered to the session started) and connections that failed, by provider. */
function agentConnectMetrics(metrics: Registry): AgentConnectObserver {
  const seconds = new Histogram({
    name: 'vgw_agent_connect_seconds', help: 'From opening a streaming agent\'s session to its start, connections that succeeded, by provider.',
    labelNames: ['provider'], buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8], registers: [metrics],
  });
  const failures = new Counter({
    name: 'vgw_agent_connect_failures_total', help: 'Streaming agent connections that failed, by provider and reason (unreachable, rejected, protocol, other).',
    labelNames: ['provider', 'reason'], registers: [metrics],
  });
  return (provider, outcome) => {
    if (outcome.connected) seconds.observe({ provider }, outcome.seconds);
    else failures.inc({ provider, reason: outcome.reason });
  };
}
