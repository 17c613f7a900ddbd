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
import { nextStateFrom, type TransitionTable } from '../../../common/state-machine.js';

export const SANDBOX_CALL_STATES = ['ringing', 'answering', 'active', 'ended'] as const;
export type SandboxCallState = (typeof SANDBOX_CALL_STATES)[number];

/** What happens to a call. */
export type SandboxCallEvent = 'ring-time-over' | 'answered' | 'ended';
export const SANDBOX_CALL_EVENTS: readonly SandboxCallEvent[] = ['ring-time-over', 'answered', 'ended'];

const TABLE: TransitionTable<SandboxCallState, SandboxCallEvent> = {
  ringing: { 'ring-time-over': 'answering', ended: 'ended' },
  answering: { answered: 'active', ended: 'ended' },
  active: { ended: 'ended' },
  ended: {},
};

/** The next state; throws IllegalTransitionError for an edge the diagram does not have (a bug in the caller). Pure. */
export const nextSandboxCallState: (state: SandboxCallState, event: SandboxCallEvent) => SandboxCallState = nextStateFrom('SandboxCall', TABLE);
