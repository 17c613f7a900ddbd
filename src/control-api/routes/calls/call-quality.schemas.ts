/** @module Schema of `cdr.quality` (docs/API.md "Call quality"): each RTP leg's figures and MOS, and a streaming agent's audio counters. */
import { Type } from '@sinclair/typebox';
import { StringEnum } from '../../../common/schema.js';

const Ms = (description: string) => Type.Number({ description: `${description}, in milliseconds.` });
const Count = (description: string) => Type.Integer({ minimum: 0, description });

const LegQualitySchema = Type.Object({
  leg: StringEnum(['carrier', 'agent', 'transfer_target'], { description: "The carrier's leg, a sip_trunk agent edge's, or a bridge transfer's target." }),
  codec: Type.String(), srtp: Type.Boolean(),
  packets_sent: Count('RTP packets sent to the far end.'), octets_sent: Count('Their payload octets.'),
  packets_received: Count('RTP packets accepted from the far end.'), octets_received: Count('Their payload octets.'),
  packets_lost: Count('Packets of the far end that never arrived (RFC 3550 A.3, counted by the gateway).'),
  packets_lost_reported: Type.Union([Count('Packets of ours the far end reported lost in its last RTCP report (RFC 3550 §6.4.1).'), Type.Null()]),
  jitter_mean_ms: Ms('Mean of the interarrival jitter estimate (RFC 3550 A.8) over the call'),
  jitter_max_ms: Ms('Largest value of that estimate'),
  rtt_ms: Type.Union([Ms('Round-trip time from RTCP SR/RR (RFC 3550 §6.4.1)'), Type.Null()]),
  longest_silence_received_ms: Ms('Longest time without a packet from the far end'),
  longest_silence_sent_ms: Ms('Longest time without a packet to the far end'),
  mos: Type.Number({ minimum: 1, maximum: 4.5, description: 'Estimated MOS, ITU-T G.107 E-model for G.711 with PLC (G.113 Appendix I).' }),
});

const AgentStreamQualitySchema = Type.Object({
  frames_to_agent: Count('Caller audio frames sent to the agent.'),
  frames_to_agent_dropped: Count('Caller frames dropped because the agent stopped reading.'),
  frames_from_agent: Count('Audio chunks the agent sent.'),
  frames_from_agent_dropped: Count('Agent chunks discarded (on hold, or over the backlog before the media joined).'),
  playout_underruns: Count('20 ms ticks with no agent audio to play while some was expected.'),
  largest_agent_audio_gap_ms: Ms('Largest gap between two agent audio chunks, pauses between turns included'),
  first_agent_audio_ms: Type.Union([Ms('From the answer to the agent\'s first audio'), Type.Null()]),
});

export const CallQualitySchema = Type.Union([
  Type.Object({ legs: Type.Array(LegQualitySchema), agent_stream: Type.Union([AgentStreamQualitySchema, Type.Null()]) }),
  Type.Null(),
], { description: 'Media quality when the call ended (docs/API.md "Call quality"); null for a call never answered.' });
