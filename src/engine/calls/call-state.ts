/**
 * @module The call state machine (docs/API.md "Calls"). Hold is not a state: `on_hold` is a flag
 * of an `active` call.
 *
 * ```
 *                 18x                 2xx
 *   initiated ─────────▶ ringing ─────────▶ active
 *       │   ╲                │                 │
 *       │    ╲──── 2xx ──────┼───────▶ active   │
 *       │                    │                 │
 *       └──── failure ───────┴──── failure ────┴──── hangup ────▶ ended
 * ```
 * - `initiated`: the call exists; the INVITE is being sent (outbound) or was just received (inbound).
 * - `ringing`: the far end sent a provisional response with ringing or early media (18x).
 * - `active`: answered (2xx); media flows, the agent is connected.
 * - `ended`: terminal. A call that never connected goes straight here with an end reason.
 */

export const CALL_STATES = ['initiated', 'ringing', 'active', 'ended'] as const;
export type CallState = (typeof CALL_STATES)[number];

export type CallEvent = 'ringing' | 'answered' | 'ended';

const EDGES: Record<CallState, Partial<Record<CallEvent, CallState>>> = {
  initiated: { ringing: 'ringing', answered: 'active', ended: 'ended' },
  // A further 18x while ringing (180 then 183) keeps the call ringing.
  ringing: { ringing: 'ringing', answered: 'active', ended: 'ended' },
  active: { ended: 'ended' },
  ended: {},
};

/** Thrown for an event the state does not allow: a bug in the caller, never a remote party's doing. */
export class IllegalCallTransition extends Error {
  override readonly name = 'IllegalCallTransition';
}

/** The state after `event`, or an IllegalCallTransition. Pure: the Call class applies it. */
export function nextCallState(state: CallState, event: CallEvent): CallState | IllegalCallTransition {
  return EDGES[state][event] ?? new IllegalCallTransition(`call event "${event}" is not allowed in state "${state}"`);
}

/** Live calls are the ones not ended. */
export const isLive = (state: CallState): boolean => state !== 'ended';
