/**
 * @module The transfer state machine (docs/ARCHITECTURE.md, "State machines"): the phases of one
 * blind transfer of the remote party, by bridge or by REFER. `Transfer.transition` is the only
 * place that applies it.
 *
 * ```
 *                target answered (bridge)
 *   dialing ──────────────────────────────▶ bridged
 *    │  │  202 (refer)                        │
 *    │  └───────────▶ referred                │
 *    │                 │    │ NOTIFY 2xx      │
 *    │  NOTIFY 2xx     │    ▼                 │
 *    ├──────────────────▶ connected           │ error
 *    │                 │    ▲                 │
 *    │  fail,          │    │ NOTIFY 2xx      │
 *    │  NOTIFY 3xx-6xx │ NOTIFY 3xx-6xx, fail │
 *    ▼                 ▼    │                 │
 *   failed ◀───────────┴────┴─────────────────┘
 *
 *   every phase ── close (the call ended) ──▶ closed
 * ```
 * - `dialing`: the target is being called (bridge) or the REFER is on its way (refer).
 * - `bridged`: the target answered; the agent is released and the remote party's RTP is bridged to the target's.
 * - `referred`: the carrier accepted the REFER (202); the agent is released and the outcome comes in NOTIFYs.
 * - `connected`: the carrier reported the transfer done (NOTIFY 2xx); the call is ending as `transferred`.
 * - `failed`: the target did not answer, the REFER was refused or the carrier reported a failure;
 *   a NOTIFY 2xx arriving after a lost REFER response still completes it.
 * - `closed`: terminal; the call ended and the transfer leg is torn down. Late outcomes are dropped.
 */
import { nextStateFrom, type TransitionTable } from '../../../common/state-machine.js';

export const TRANSFER_PHASES = ['dialing', 'bridged', 'referred', 'connected', 'failed', 'closed'] as const;
export type TransferPhase = (typeof TRANSFER_PHASES)[number];

/**
 * Inputs: `answered` (bridge target answered with a usable answer), `accepted` (REFER got a 2xx),
 * `notify-2xx` / `notify-failure` (a final sipfrag status in a NOTIFY, RFC 3515 2.4.5), `fail`
 * (no transfer possible, target failed, REFER refused, an error) and `close` (the call ended).
 */
export const TRANSFER_EVENTS = ['answered', 'accepted', 'notify-2xx', 'notify-failure', 'fail', 'close'] as const;
export type TransferEvent = (typeof TRANSFER_EVENTS)[number];

const TABLE: TransitionTable<TransferPhase, TransferEvent> = {
  // RFC 3515 2.4.4: a NOTIFY may overtake the 202 to the REFER.
  dialing: { answered: 'bridged', accepted: 'referred', 'notify-2xx': 'connected', 'notify-failure': 'failed', fail: 'failed', close: 'closed' },
  bridged: { fail: 'failed', close: 'closed' },
  referred: { 'notify-2xx': 'connected', 'notify-failure': 'failed', fail: 'failed', close: 'closed' },
  // Done: what still arrives for it (a late REFER outcome, a repeated NOTIFY) changes nothing.
  connected: { accepted: 'connected', 'notify-2xx': 'connected', 'notify-failure': 'connected', fail: 'connected', close: 'closed' },
  // A 202 after a NOTIFY that reported failure changes nothing: the agent stays on the call.
  failed: { accepted: 'failed', 'notify-2xx': 'connected', 'notify-failure': 'failed', fail: 'failed', close: 'closed' },
  closed: { answered: 'closed', accepted: 'closed', 'notify-2xx': 'closed', 'notify-failure': 'closed', fail: 'closed', close: 'closed' },
};

/** The phase after `event` (itself for "stay"); throws IllegalTransitionError for an event the phase refuses. Pure. */
export const nextTransferPhase: (phase: TransferPhase, event: TransferEvent) => TransferPhase = nextStateFrom('Transfer', TABLE);

/** Phases during which a second transfer must wait. */
export const isTransferActive = (phase: TransferPhase): boolean =>
  phase === 'dialing' || phase === 'bridged' || phase === 'referred' || phase === 'connected';
