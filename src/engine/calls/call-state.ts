/**
 * @module The call state machine (docs/ARCHITECTURE.md, "State machines"). Hold is not a state: `on_hold` is a
 * flag of an `active` call. `Call.transition` is the only place that applies it.
 *
 * ```
 *                 18x                 2xx
 *   initiated ─────────▶ ringing ─────────▶ active
 *       │   ╲             │  ▲ 18x            │
 *       │    ╲──── 2xx ───┼──┴───────▶ active  │
 *       │                 │                    │
 *       └──── ended ──────┴──── ended ─────────┴──── ended ────▶ ended ◀─┐ late 18x / 2xx:
 *                                                                  └────┘ stay, nothing written
 * ```
 * - `initiated`: the call exists; the INVITE is being sent (outbound) or was just received (inbound).
 * - `ringing`: the far end sent a provisional response with ringing or early media (18x).
 * - `active`: answered (2xx); media flows, the agent is connected.
 * - `ended`: terminal. A call that never connected goes straight here with an end reason; signalling
 *   that arrives after the end (a 180 or 2xx racing a hang-up) changes nothing.
 */
import { nextStateFrom, type TransitionTable } from '../../common/state-machine.js';

export const CALL_STATES = ['initiated', 'ringing', 'active', 'ended'] as const;
export type CallState = (typeof CALL_STATES)[number];

export const CALL_EVENTS = ['ringing', 'answered', 'ended'] as const;
export type CallEvent = (typeof CALL_EVENTS)[number];

const TABLE: TransitionTable<CallState, CallEvent> = {
  initiated: { ringing: 'ringing', answered: 'active', ended: 'ended' },
  // A further 18x while ringing (180 then 183) keeps the call ringing.
  ringing: { ringing: 'ringing', answered: 'active', ended: 'ended' },
  // No 18x after the answer, and one answer per call: both are bugs. A second end is refused by
  // `Call.markEnded` before it gets here (the first reason is the true one).
  active: { ended: 'ended' },
  ended: { ringing: 'ended', answered: 'ended' },
};

/** The state after `event` (itself for "stay"); throws IllegalTransitionError for an event the state refuses. Pure. */
export const nextCallState: (state: CallState, event: CallEvent) => CallState = nextStateFrom('Call', TABLE);

/** Live calls are the ones not ended. */
export const isLive = (state: CallState): boolean => state !== 'ended';
