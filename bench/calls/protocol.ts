/** @module Messages between the calls benchmark and its load-agent child process (over the Node IPC channel). */

/** One agent connection as the load agent saw it. */
export interface AgentCallCounts {
  callId: string;
  /** `media` messages received from the gateway (the far end's echo or the gateway's silence fill). */
  received: number;
  /** Received `media` messages whose payload is the agent's own frame: agent audio that made the round trip. */
  echoed: number;
  /** `media` messages this agent sent. */
  sent: number;
  /** Frames the agent let go unsent because its own process fell more than 200 ms behind. */
  skipped: number;
  /** Wall-clock ms (Date.now) when the gateway's `start` arrived. */
  startedAt: number;
  /** True once the gateway closed the socket. */
  closed: boolean;
}

export type AgentRequest = { type: 'snapshot'; id: number } | { type: 'forget-closed' };

export type AgentReply =
  | { type: 'listening'; port: number }
  | { type: 'snapshot'; id: number; calls: AgentCallCounts[] };

/** µ-law byte the agent fills its frames with: not silence (0xFF/0x7F), and unchanged by a G.711 decode and re-encode. */
export const AGENT_FRAME_BYTE = 0x55;
/** 20 ms of 8 kHz µ-law. */
export const FRAME_BYTES = 160;
export const FRAME_MS = 20;
