/**
 * @module The state machine of a WebSocket agent session: its states, the diagram, and the pure
 * transition rule. Apart from socket-agent-session.ts so that the rule can be read and tested
 * without the socket that drives it.
 */
import { IllegalTransitionError } from '../common/errors.js';

/**
 * Session states.
 * ```
 *   idle --start()--> connecting --platform ready--> ready --socket closed / close()--> closed
 *                          |                                                            ^
 *                          +--------- time-out, refusal, close() ----------------------+
 * ```
 * idle: built, nothing opened. connecting: HTTP steps and WebSocket handshake under way.
 * ready: audio flows both ways. closed: terminal; every command is ignored.
 */
export type AgentSessionState = 'idle' | 'connecting' | 'ready' | 'closed';

const EDGES: Record<AgentSessionState, readonly AgentSessionState[]> = {
  idle: ['connecting', 'closed'],
  connecting: ['ready', 'closed'],
  ready: ['closed'],
  closed: [],
};

/** The pure transition rule; throws IllegalTransitionError on an edge the diagram does not have. */
export function nextAgentSessionState(from: AgentSessionState, to: AgentSessionState): AgentSessionState {
  if (!EDGES[from].includes(to)) throw new IllegalTransitionError({ machine: 'AgentSession', state: from, to });
  return to;
}
