/**
 * @module The live media state of a call as the engine reports it (`CallControl.sessionOf`): one
 * type per part of the call, each filled by the object that owns that part. The control API maps
 * it to the snake_case `session` of `GET /v1/calls/{id}` in one presenter (docs/API.md, "The
 * session of a live call"); names here follow the code, not the wire.
 */

/** One SIP leg's media: the carrier's leg of a call, or the agent edge's leg of a sip_trunk call (`RemoteLeg`). */
export interface RemoteLegSnapshot {
  codec: string;
  /** The SRTP suite in use; null for plain RTP. */
  srtp: string | null;
  packets_unauthenticated: number;
  rtcp_unauthenticated: number;
  local_rtp_port: number;
  /** `address:port` the leg sends to; null before the far end is known. */
  remote_rtp: string | null;
  packets_sent: number;
  packets_received: number;
  packets_lost: number;
  jitter_ms: number;
  direction: 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive';
  reoffers: number;
}

/** What `AgentMediaLeg.stats()` counts: the carrier leg joined to a streaming agent. */
export interface AgentMediaLegStats {
  codec: string;
  agentInput: string | null;
  agentOutput: string | null;
  held: boolean;
  framesToAgent: number;
  framesToAgentDropped: number;
  packetsDropped: number;
  digits: number;
  clears: number;
  marks: number;
  agentChunks: number;
  agentChunksDiscarded: number;
  bargeIns: number;
  framesToCarrier: number;
  framesPlayed: number;
  underruns: number;
  bufferedMs: number;
  bargeIn: 'client' | 'platform';
  callerSpeaking: boolean;
  callerSpeechStarts: number;
  callerSpeechStops: number;
  echoFrames: number;
  /** From the answer (the leg's start) to the agent's first audio, in ms; null while none came. */
  firstAgentAudioMs: number | null;
  /** The largest gap between two chunks of agent audio, pauses between turns included, in ms. */
  largestAgentAudioGapMs: number;
  rtp: {
    localPort: number;
    packetsSent: number;
    octetsSent: number;
    packetsReceived: number;
    packetsRejected: number;
    packetsLost: number;
    jitterMs: number;
  };
}

/** A streaming agent (WebSocket or platform) joined through the agent media leg. */
export type StreamAgentSnapshot = { kind: 'stream'; connected: boolean } & AgentMediaLegStats;

/** A sip_trunk agent: the second SIP leg, bridged to the carrier's once it answers. */
export interface SipTrunkAgentSnapshot {
  kind: 'sip_trunk';
  connected: boolean;
  bridged: boolean;
  /** The agent leg's media once answered, its RTP socket's counts before; null without a socket. */
  rtp: RemoteLegSnapshot | { local_rtp_port: number; packets_sent: number; packets_received: number } | null;
}

export type AgentSideSnapshot = StreamAgentSnapshot | SipTrunkAgentSnapshot;

export interface TransferSnapshot {
  to: string;
  method: 'bridge' | 'refer';
  phase: 'dialing' | 'bridged' | 'referred' | 'connected' | 'failed' | 'closed';
  /** The target leg's local RTP port while it exists. */
  target: { rtp_port: number } | null;
}

/** A call before its answer: the carrier leg's port, and an inbound sip_trunk call's agent leg. */
export interface SetupSessionSnapshot {
  phase: 'setup';
  local_rtp_port: number;
  agent?: SipTrunkAgentSnapshot | null;
}

/** An answered call (`ConnectedCall`). */
export interface ConnectedSessionSnapshot {
  remote: RemoteLegSnapshot;
  agent: AgentSideSnapshot | null;
  transfer: TransferSnapshot | null;
  recording: { paused: boolean } | null;
  transcription: { engine: string | null; paused: boolean } | null;
}

export type CallSessionSnapshot = SetupSessionSnapshot | ConnectedSessionSnapshot;
