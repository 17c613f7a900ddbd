/**
 * @module States of one call at the sandbox far end, and the pure transition function.
 *
 * ```
 *   INVITE ──► ringing ──ring time──► answering ──200 OK──► active
 *                 │                       │                   │
 *                 └── CANCEL, failure ────┴──── BYE, limit ───┴──► ended
 * ```
 * - ringing: 180 Ringing sent; the ring timer runs (or, for the never-answering number, the limit).
 * - answering: the ring time is over; RTP ports are being bound before the 200 OK goes out.
 * - active: 200 OK sent; the announcement and the echo play until a BYE or the call limit.
 * - ended: final failure, CANCEL, or BYE either way; timers cleared and ports released.
 */

export const SANDBOX_CALL_STATES = ['ringing', 'answering', 'active', 'ended'] as const;
export type SandboxCallState = (typeof SANDBOX_CALL_STATES)[number];

/** What happens to a call. */
export type SandboxCallEvent = 'ring-time-over' | 'answered' | 'ended';
export const SANDBOX_CALL_EVENTS: readonly SandboxCallEvent[] = ['ring-time-over', 'answered', 'ended'];

/** An edge the diagram does not have: a bug in the caller. */
export class IllegalSandboxTransition extends Error {
  override readonly name = 'IllegalSandboxTransition';
  readonly from: SandboxCallState;
  readonly event: SandboxCallEvent;

  constructor(from: SandboxCallState, event: SandboxCallEvent) {
    super(`sandbox call: ${event} is illegal in state ${from}`);
    this.from = from;
    this.event = event;
  }
}

/** The next state, or the illegal edge as a value (the call class throws it). */
export function nextSandboxCallState(state: SandboxCallState, event: SandboxCallEvent): SandboxCallState | IllegalSandboxTransition {
  if (event === 'ended') return state === 'ended' ? new IllegalSandboxTransition(state, event) : 'ended';
  if (state === 'ringing' && event === 'ring-time-over') return 'answering';
  if (state === 'answering' && event === 'answered') return 'active';
  return new IllegalSandboxTransition(state, event);
}
