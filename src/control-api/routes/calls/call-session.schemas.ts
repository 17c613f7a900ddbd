/**
 * @module The `session` of `GET /v1/calls/{id}` (docs/API.md, "The session of a live call"): the
 * live media state of a call, snake_case like every other field, declared in the OpenAPI
 * document, and mapped from the engine's snapshot in one presenter.
 */
import { Type, type Static } from '@sinclair/typebox';
import type {
  AgentSideSnapshot, CallSessionSnapshot, RemoteLegSnapshot, SipTrunkAgentSnapshot, TransferSnapshot,
} from '../../../engine/calls/session-snapshot.js';
import { StringEnum } from '../../../common/schema.js';
import { component } from '../../openapi/openapi-document.js';

const Count = (description: string) => Type.Integer({ minimum: 0, description });
const Port = (description: string) => Type.Integer({ minimum: 0, maximum: 65535, description });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T, description: string) =>
  Type.Union([schema, Type.Null()], { description });
const strict = { additionalProperties: false } as const;

export const RemoteLegSchema = Type.Object({
  codec: Type.String({ description: 'The audio codec negotiated on this leg (`PCMU`, `PCMA`, `G722`).' }),
  srtp: Nullable(Type.String(), 'The SRTP suite in use (`AES_CM_128_HMAC_SHA1_80`, …); null for plain RTP.'),
  packets_unauthenticated: Count('SRTP packets dropped because their authentication tag did not verify.'),
  rtcp_unauthenticated: Count('SRTCP packets dropped because their authentication tag did not verify.'),
  local_rtp_port: Port('The gateway\'s RTP port of this leg.'),
  remote_rtp: Nullable(Type.String(), 'The `address:port` the leg sends RTP to; null before the far end is known.'),
  packets_sent: Count('RTP packets sent on this leg.'),
  packets_received: Count('RTP packets received from the far end.'),
  packets_lost: Type.Integer({ description: 'Packets lost as RFC 3550 counts them (expected minus received; negative with duplicates).' }),
  jitter_ms: Type.Number({ minimum: 0, description: 'RFC 3550 interarrival jitter, in milliseconds.' }),
  direction: StringEnum(['sendrecv', 'sendonly', 'recvonly', 'inactive'], { description: 'The gateway\'s SDP direction on this leg (`sendonly` while the far end holds it, …).' }),
  reoffers: Count('SDP offers the far end sent after the first (re-INVITE or UPDATE).'),
}, { ...strict, ...component('CallSessionRemoteLeg'), description: 'One SIP leg\'s media.' });

const StreamAgentSchema = Type.Object({
  kind: Type.Literal('stream', { description: 'A streaming agent: a WebSocket of the tenant\'s or a voice-agent platform.' }),
  connected: Type.Boolean({ description: 'Whether the agent\'s connection is open.' }),
  codec: Type.String({ description: 'The carrier leg\'s codec (`PCMU` or `PCMA`).' }),
  agent_input: Nullable(Type.String(), 'The audio format sent to the agent (`mulaw/8000`, `pcm16/16000`, …); null before the agent is attached.'),
  agent_output: Nullable(Type.String(), 'The audio format the agent sends; null before the agent is attached.'),
  held: Type.Boolean({ description: 'Whether the call is on hold (no caller audio to the agent).' }),
  frames_to_agent: Count('20 ms caller frames sent to the agent.'),
  frames_to_agent_dropped: Count('Caller frames dropped because the agent stopped reading.'),
  packets_dropped: Count('Packets from the latched carrier source that were malformed, oversized or of a foreign payload type.'),
  digits: Count('DTMF digits received from the caller (RFC 4733).'),
  clears: Count('Times the agent asked to clear its queued audio.'),
  marks: Count('Marks the agent sent.'),
  agent_chunks: Count('Audio chunks received from the agent.'),
  agent_chunks_discarded: Count('Agent audio chunks discarded (while held, or before the leg was attached and beyond its backlog).'),
  barge_ins: Count('Times the gateway cut the agent\'s audio because the caller started speaking (`barge_in: client`).'),
  frames_to_carrier: Count('20 ms frames sent to the carrier (agent audio, silence or hold music).'),
  frames_played: Count('Frames of agent audio played to the caller.'),
  underruns: Count('Frames sent as silence because no agent audio was queued.'),
  buffered_ms: Count('Agent audio queued for the caller, in milliseconds.'),
  barge_in: StringEnum(['client', 'platform'], { description: 'Who detects the caller speaking over the agent: the gateway (`client`) or the agent platform.' }),
  caller_speaking: Type.Boolean({ description: 'Whether the caller is speaking now (voice activity detection).' }),
  caller_speech_starts: Count('Caller speech starts detected.'),
  caller_speech_stops: Count('Caller speech stops detected.'),
  echo_frames: Count('Caller frames taken for echo of the agent\'s audio and kept from the voice activity detector.'),
  rtp: Type.Object({
    local_port: Port('The gateway\'s RTP port of the carrier leg.'),
    packets_sent: Count('RTP packets sent to the carrier.'),
    octets_sent: Count('RTP payload octets sent to the carrier.'),
    packets_received: Count('RTP packets received from the carrier.'),
    packets_rejected: Count('RTP packets refused because they came from another address than the latched source.'),
    packets_lost: Type.Integer({ description: 'Packets lost as RFC 3550 counts them.' }),
    jitter_ms: Type.Number({ minimum: 0, description: 'RFC 3550 interarrival jitter, in milliseconds.' }),
  }, { ...strict, description: 'The carrier leg\'s RTP counters.' }),
}, { ...strict, ...component('CallSessionStreamAgent'), description: 'The agent side of a call joined to a streaming agent.' });

const SipTrunkAgentSchema = Type.Object({
  kind: Type.Literal('sip_trunk', { description: 'An agent reached over a second SIP leg (`sip_trunk` connection mode).' }),
  connected: Type.Boolean({ description: 'Whether the agent leg\'s dialog is up.' }),
  bridged: Type.Boolean({ description: 'Whether the two legs\' media are bridged.' }),
  rtp: Type.Union([
    RemoteLegSchema,
    Type.Object({
      local_rtp_port: Port('The gateway\'s RTP port of the agent leg.'),
      packets_sent: Count('RTP packets sent to the agent edge.'),
      packets_received: Count('RTP packets received from the agent edge.'),
    }, { ...strict, description: 'The agent leg before it answers: its socket\'s counters.' }),
    Type.Null(),
  ], { description: 'The agent leg\'s media once answered, its RTP socket\'s counters before; null without a socket.' }),
}, { ...strict, ...component('CallSessionSipTrunkAgent'), description: 'The agent side of a call joined to an agent over SIP.' });

const TransferSchema = Type.Object({
  to: Type.String({ description: 'The transfer target, E.164.' }),
  method: StringEnum(['bridge', 'refer'], { description: 'How the carrier transfers: a second call bridged by the gateway, or a SIP REFER.' }),
  phase: StringEnum(['dialing', 'bridged', 'referred', 'connected', 'failed', 'closed'], { description: 'Where the transfer is.' }),
  target: Nullable(Type.Object({ rtp_port: Port('The gateway\'s RTP port of the target leg.') }, strict), 'The target leg while it exists.'),
}, { ...strict, description: 'The transfer under way or done.' });

const SetupSessionSchema = Type.Object({
  phase: Type.Literal('setup', { description: 'The call is not answered yet.' }),
  local_rtp_port: Port('The gateway\'s RTP port of the carrier leg.'),
  agent: Type.Optional(Nullable(SipTrunkAgentSchema, 'Inbound calls to a `sip_trunk` agent: the agent leg being dialled (its answer answers the caller); null before it is dialled.')),
}, { ...strict, description: 'A call before its answer.' });

const ConnectedSessionSchema = Type.Object({
  remote: RemoteLegSchema,
  agent: Type.Union([StreamAgentSchema, SipTrunkAgentSchema, Type.Null()], { description: 'The agent side; null once it is released (after a transfer connects).' }),
  transfer: Nullable(TransferSchema, 'The transfer, when one was started.'),
  recording: Nullable(Type.Object({ paused: Type.Boolean({ description: 'Paused while the call is on hold.' }) }, strict), 'The gateway\'s recording, when the call is recorded.'),
  transcription: Nullable(Type.Object({
    engine: Nullable(Type.String(), 'The speech recognizer (`pocketsphinx`, …).'),
    paused: Type.Boolean({ description: 'Paused while the call is on hold.' }),
  }, strict), 'The gateway\'s own transcription, when it runs.'),
}, { ...strict, description: 'An answered call.' });

export const CallSessionSchema = Type.Union([SetupSessionSchema, ConnectedSessionSchema], {
  ...component('CallSession'),
  description: 'The live media state of a call: before the answer (`phase: setup`), or its legs once answered.',
});

export type CallSessionView = Static<typeof CallSessionSchema>;

const presentRemote = (r: RemoteLegSnapshot): Static<typeof RemoteLegSchema> => ({
  codec: r.codec, srtp: r.srtp, packets_unauthenticated: r.packets_unauthenticated, rtcp_unauthenticated: r.rtcp_unauthenticated,
  local_rtp_port: r.local_rtp_port, remote_rtp: r.remote_rtp, packets_sent: r.packets_sent, packets_received: r.packets_received,
  packets_lost: r.packets_lost, jitter_ms: r.jitter_ms, direction: r.direction, reoffers: r.reoffers,
});

function presentSipTrunk(a: SipTrunkAgentSnapshot): Static<typeof SipTrunkAgentSchema> {
  const rtp = a.rtp === null ? null : 'codec' in a.rtp ? presentRemote(a.rtp)
    : { local_rtp_port: a.rtp.local_rtp_port, packets_sent: a.rtp.packets_sent, packets_received: a.rtp.packets_received };
  return { kind: 'sip_trunk', connected: a.connected, bridged: a.bridged, rtp };
}

function presentAgent(a: AgentSideSnapshot): Static<typeof StreamAgentSchema> | Static<typeof SipTrunkAgentSchema> {
  if (a.kind === 'sip_trunk') return presentSipTrunk(a);
  return {
    kind: 'stream', connected: a.connected, codec: a.codec, agent_input: a.agentInput, agent_output: a.agentOutput, held: a.held,
    frames_to_agent: a.framesToAgent, frames_to_agent_dropped: a.framesToAgentDropped, packets_dropped: a.packetsDropped, digits: a.digits,
    clears: a.clears, marks: a.marks, agent_chunks: a.agentChunks, agent_chunks_discarded: a.agentChunksDiscarded, barge_ins: a.bargeIns,
    frames_to_carrier: a.framesToCarrier, frames_played: a.framesPlayed, underruns: a.underruns, buffered_ms: a.bufferedMs, barge_in: a.bargeIn,
    caller_speaking: a.callerSpeaking, caller_speech_starts: a.callerSpeechStarts, caller_speech_stops: a.callerSpeechStops, echo_frames: a.echoFrames,
    rtp: {
      local_port: a.rtp.localPort, packets_sent: a.rtp.packetsSent, octets_sent: a.rtp.octetsSent, packets_received: a.rtp.packetsReceived,
      packets_rejected: a.rtp.packetsRejected, packets_lost: a.rtp.packetsLost, jitter_ms: a.rtp.jitterMs,
    },
  };
}

const presentTransfer = (t: TransferSnapshot): Static<typeof TransferSchema> =>
  ({ to: t.to, method: t.method, phase: t.phase, target: t.target && { rtp_port: t.target.rtp_port } });

/** The engine's snapshot of a live call as the API's `session` (each field named and picked here, nothing passed through). */
export function presentSession(s: CallSessionSnapshot): CallSessionView {
  if ('phase' in s) {
    return { phase: 'setup', local_rtp_port: s.local_rtp_port, ...(s.agent === undefined ? {} : { agent: s.agent && presentSipTrunk(s.agent) }) };
  }
  return {
    remote: presentRemote(s.remote),
    agent: s.agent && presentAgent(s.agent),
    transfer: s.transfer && presentTransfer(s.transfer),
    recording: s.recording && { paused: s.recording.paused },
    transcription: s.transcription && { engine: s.transcription.engine, paused: s.transcription.paused },
  };
}
