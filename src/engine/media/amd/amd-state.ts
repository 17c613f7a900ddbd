/**
 * @module The phases of answering-machine detection as a state machine (docs/ARCHITECTURE.md,
 * "State machines"); `AmdDetector` applies it, nowhere else.
 *
 * ```
 *              greeting ends short        (result: human)
 *   listening ───────────────────────────▶ decided
 *       │  greeting too long, beep        (result: machine)
 *       │  fax calling tone               (result: fax)
 *       │  nothing heard in time          (result: unknown)
 *       └──────────────────────────────────┘
 * ```
 * - `listening`: frames are analysed; nothing is known yet.
 * - `decided`: terminal; later frames are ignored (the beep watch of `wait_for_beep` is not a phase
 *   of the decision, it only dates the beep).
 */
import { nextStateFrom, type TransitionTable } from '../../../common/state-machine.js';

export const AMD_STATES = ['listening', 'decided'] as const;
export type AmdState = (typeof AMD_STATES)[number];

export const AMD_EVENTS = ['decide'] as const;
export type AmdEvent = (typeof AMD_EVENTS)[number];

const TABLE: TransitionTable<AmdState, AmdEvent> = {
  listening: { decide: 'decided' },
  // A second decision is a bug: the first one stands.
  decided: {},
};

/** The state after `event`; throws IllegalTransitionError for an event the state refuses. Pure. */
export const nextAmdState: (state: AmdState, event: AmdEvent) => AmdState = nextStateFrom('AmdDetector', TABLE);
