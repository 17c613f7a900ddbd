/**
 * @module Prometheus metrics for a dashboard of the gateway's health (docs/API.md "Operational
 * endpoints", docs/grafana-dashboard.json): live calls by direction and carrier with the series at
 * 0 kept, outcomes by carrier and end reason, setup time and post-dial delay, the time from the
 * answer to the agent's first audio, the RTP port pool, and SIP messages by method and class.
 * Labels are bounded sets only: directions, configured carrier names, end reasons, SIP methods
 * (others read `other`) and status classes; never a call id or a number.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { CallRecord, CallRegistry } from '../../engine/calls/index.js';
import { relayedPacketsInProcess, type PortPool } from '../../engine/media/index.js';

const DIRECTIONS = ['inbound', 'outbound'] as const;
const METHODS = new Set(['INVITE', 'ACK', 'BYE', 'CANCEL', 'OPTIONS', 'REGISTER', 'PRACK', 'UPDATE', 'INFO', 'REFER', 'NOTIFY', 'SUBSCRIBE', 'MESSAGE']);
const SETUP_BUCKETS = [0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];

export interface EngineMetrics {
  callEnded(call: CallRecord): void;
  /** One SIP message received or sent, as on the wire. */
  sipMessage(direction: 'received' | 'sent', data: Buffer): void;
}

/** `INVITE` or `2xx` from a message's start line, without decoding the rest. */
function startLineLabels(data: Buffer): { method: string; class: string } {
  const space = data.indexOf(0x20);
  const token = data.toString('latin1', 0, space < 0 ? Math.min(16, data.length) : Math.min(space, 16));
  if (token === 'SIP/2.0') return { method: 'response', class: `${String.fromCharCode(data[space + 1] ?? 0x30)}xx` };
  return { method: METHODS.has(token) ? token : 'other', class: 'request' };
}

export function createEngineMetrics(metrics: Registry, o: { calls: () => CallRegistry | undefined; carriers: () => readonly string[]; ports: PortPool }): EngineMetrics {
  new Gauge({
    name: 'vgw_calls_active', help: 'Calls in progress on this node, by direction and carrier (0 kept for every configured carrier).',
    labelNames: ['direction', 'carrier'], registers: [metrics],
    collect() {
      this.reset();
      for (const carrier of o.carriers()) for (const direction of DIRECTIONS) this.set({ direction, carrier }, 0);
      for (const live of o.calls()?.all() ?? []) {
        const call = live.call.snapshot();
        this.inc({ direction: call.direction, carrier: call.carrier });
      }
    },
  });
  new Gauge({
    name: 'vgw_rtp_port_pairs', help: 'RTP port pairs of the media pool, in use and free.', labelNames: ['state'], registers: [metrics],
    collect() {
      this.set({ state: 'in_use' }, o.ports.inUse);
      this.set({ state: 'free' }, o.ports.available);
    },
  });
  const outcomes = new Counter({
    name: 'vgw_call_outcomes_total', help: 'Call attempts ended, by direction, carrier and end reason.', labelNames: ['direction', 'carrier', 'end_reason'], registers: [metrics],
  });
  const setup = new Histogram({
    name: 'vgw_call_setup_seconds', help: 'From the call\'s creation (INVITE) to its answer, answered calls.', labelNames: ['direction', 'carrier'], buckets: SETUP_BUCKETS, registers: [metrics],
  });
  const postDial = new Histogram({
    name: 'vgw_call_post_dial_delay_seconds', help: 'From the call\'s creation (INVITE) to the first ringing, calls that rang.', labelNames: ['direction', 'carrier'], buckets: SETUP_BUCKETS, registers: [metrics],
  });
  const firstAudio = new Histogram({
    name: 'vgw_agent_first_audio_seconds', help: 'From the answer to the streaming agent\'s first audio.', buckets: [0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10], registers: [metrics],
  });
  new Counter({
    name: 'vgw_rtp_relayed_packets_total', help: 'RTP packets relayed leg to leg by the media I/O without JavaScript (sip_trunk bridges), reported so far.', registers: [metrics],
    collect() {
      this.reset();
      this.inc(relayedPacketsInProcess());
    },
  });
  const lost = new Counter({
    name: 'vgw_rtp_packets_lost_total', help: 'RTP packets the far end sent that never arrived (RFC 3550 A.3), per leg of ended calls.', labelNames: ['leg'], registers: [metrics],
  });
  const agentFramesDropped = new Counter({
    name: 'vgw_agent_frames_dropped_total', help: 'Audio frames of streaming agents dropped, toward the agent (it stopped reading) or from it (playout overflow), ended calls.',
    labelNames: ['direction'], registers: [metrics],
  });
  const sip = new Counter({
    name: 'vgw_sip_messages_total', help: 'SIP messages received and sent (retransmissions included), by request method or response class.',
    labelNames: ['direction', 'method', 'class'], registers: [metrics],
  });
  const seconds = (from: string, to: string | null): number | null => (to === null ? null : Math.max(0, Date.parse(to) - Date.parse(from)) / 1000);
  return {
    callEnded(call) {
      const labels = { direction: call.direction, carrier: call.carrier };
      outcomes.inc({ ...labels, end_reason: call.end_reason ?? 'failed' });
      const answered = seconds(call.created_at, call.answered_at);
      if (answered !== null) setup.observe(labels, answered);
      const rang = seconds(call.created_at, call.ringing_at);
      if (rang !== null) postDial.observe(labels, rang);
      for (const leg of call.quality?.legs ?? []) lost.inc({ leg: leg.leg }, leg.packets_lost);
      const stream = call.quality?.agent_stream;
      if (stream) {
        agentFramesDropped.inc({ direction: 'to_agent' }, stream.frames_to_agent_dropped);
        agentFramesDropped.inc({ direction: 'from_agent' }, stream.frames_from_agent_dropped);
        if (stream.first_agent_audio_ms !== null) firstAudio.observe(stream.first_agent_audio_ms / 1000);
      }
    },
    sipMessage(direction, data) {
      sip.inc({ direction, ...startLineLabels(data) });
    },
  };
}
