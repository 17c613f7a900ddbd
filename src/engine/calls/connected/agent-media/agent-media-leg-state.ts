/**
 * @module The life of an {@link AgentMediaLeg} as a state machine (docs/ARCHITECTURE.md, "State
 * machines"). `AgentMediaLeg.transition` is the only place that applies it. Hold is not a state:
 * it is a flag per source (API, remote party) of a leg in any state but `detached` and `closed`.
 *
 * ```
 *          attach(link)          conversions ready
 *   idle ───────────────▶ attaching ───────────────▶ attached
 *     │                      │                          │
 *     │ detach()             │ detach()                 │ detach()
 *     ▼                      ▼                          ▼
 *   detached ◀───────────────┴──────────────────────────┘   attach(): stays detached
 *     │
 *     │ close() (from every state; it detaches first)
 *     ▼
 *   closed
 * ```
 * - `idle`: built; agent events are kept in the backlog until the link is attached.
 * - `attaching`: `attach` is creating the format conversions and the speech detector; events still wait in the backlog.
 * - `attached`: caller audio flows to the agent and agent audio is paced onto the RTP leg.
 * - `detached`: the agent side stopped for good (transfer, agent hang-up); the RTP leg is left to its owner.
 * - `closed`: terminal; the conversions and the speech detector are freed.
 */
import { nextStateFrom, type TransitionTable } from '../../../../common/state-machine.js';

export const AGENT_MEDIA_LEG_STATES = ['idle', 'attaching', 'attached', 'detached', 'closed'] as const;
export type AgentMediaLegState = (typeof AGENT_MEDIA_LEG_STATES)[number];

/** `attach` (called), `ready` (the conversions exist), `detach`, `close`. */
export const AGENT_MEDIA_LEG_EVENTS = ['attach', 'ready', 'detach', 'close'] as const;
export type AgentMediaLegEvent = (typeof AGENT_MEDIA_LEG_EVENTS)[number];

const TABLE: TransitionTable<AgentMediaLegState, AgentMediaLegEvent> = {
  idle: { attach: 'attaching', detach: 'detached', close: 'closed' },
  // A leg is attached once: a second attach is a bug.
  attaching: { ready: 'attached', detach: 'detached', close: 'closed' },
  attached: { detach: 'detached', close: 'closed' },
  // The agent side stopped before its link came: attaching it now does nothing.
  detached: { attach: 'detached', ready: 'detached', detach: 'detached', close: 'closed' },
  closed: { attach: 'closed', ready: 'closed', detach: 'closed', close: 'closed' },
};

/** The state after `event` (itself for "stay"); throws IllegalTransitionError for an event the state refuses. Pure. */
export const nextAgentMediaLegState: (state: AgentMediaLegState, event: AgentMediaLegEvent) => AgentMediaLegState = nextStateFrom('AgentMediaLeg', TABLE);

/** The agent side stopped: nothing more goes to or comes from the agent. */
export const isAgentMediaLegStopped = (state: AgentMediaLegState): boolean => state === 'detached' || state === 'closed';
