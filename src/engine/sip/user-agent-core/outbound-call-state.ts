/**
 * @module The UAC side of an INVITE (RFC 3261 §13.2, §9.1) as a state machine: what the
 * {@link OutboundCall} has heard and whether it asked to CANCEL. `OutboundCall`'s one
 * `transition(event)` applies it; the transaction below keeps its own §17.1.1 machine.
 *
 * ```
 *           retry (401/407, 422)                  provisional, retry
 *              +--+                                    +--+
 *              v  |    1xx                             v  |
 *   INVITE -> Calling -------------------------> Proceeding
 *              |  |                                |  |
 *              |  | cancel()                       |  | cancel(): CANCEL sent
 *              |  v          1xx: CANCEL sent      |  v
 *              | CancelPending ------------------> Cancelling --+
 *              |      |                                |        |
 *              +------+--------------+-----------------+        |
 *                 2xx |              | 300-699, timeout,        | 2xx (ACK, then BYE:
 *                     v              v transport error, 487     |  the CANCEL lost the race)
 *                 Accepted         Failed                       |
 *                     ^                                         |
 *                     +-----------------------------------------+
 * ```
 * - `Calling`: the INVITE (or its retry with credentials or a larger Session-Expires) is out; no provisional yet.
 * - `CancelPending`: CANCEL was asked for before any provisional; it goes once one arrives (§9.1).
 * - `Proceeding`: a provisional (100 Trying included) arrived; a CANCEL may be sent at once.
 * - `Cancelling`: the CANCEL is sent; a 487 (or the 64*T1 timer) ends the call, a racing 2xx is ACKed and ended with BYE.
 * - `Accepted`: a 2xx was ACKed; further 2xx (retransmissions, other forks) are ACKed, the forks' dialogs ended with BYE.
 * - `Failed`: a final failure, a timeout or a transport error ended the attempt; a late 2xx is ACKed and ended with BYE.
 */
import { nextStateFrom, type TransitionTable } from '../../../common/state-machine.js';

export const OUTBOUND_CALL_STATES = ['Calling', 'CancelPending', 'Proceeding', 'Cancelling', 'Accepted', 'Failed'] as const;
export type OutboundCallState = (typeof OUTBOUND_CALL_STATES)[number];

/**
 * `provisional`: any 1xx, 100 Trying included (§9.1 allows the CANCEL after it); `cancel`: the user asked to
 * CANCEL; `retry`: the INVITE goes again after a 401/407 (§22.2) or 422 (RFC 4028 §7.4); `2xx`;
 * `failure`: a 300-699 final, a timeout (408) or a transport error (503), or no answer 64*T1 after the CANCEL (487).
 */
export const OUTBOUND_CALL_EVENTS = ['provisional', 'cancel', 'retry', '2xx', 'failure'] as const;
export type OutboundCallEvent = (typeof OUTBOUND_CALL_EVENTS)[number];

const TABLE: TransitionTable<OutboundCallState, OutboundCallEvent> = {
  Calling: { provisional: 'Proceeding', cancel: 'CancelPending', retry: 'Calling', '2xx': 'Accepted', failure: 'Failed' },
  CancelPending: { provisional: 'Cancelling', cancel: 'CancelPending', retry: 'CancelPending', '2xx': 'Accepted', failure: 'Failed' },
  // A retry starts a new transaction: no provisional has arrived for it yet.
  Proceeding: { provisional: 'Proceeding', cancel: 'Cancelling', retry: 'Calling', '2xx': 'Accepted', failure: 'Failed' },
  // One CANCEL per INVITE: a second cancel() changes nothing.
  Cancelling: { provisional: 'Cancelling', cancel: 'Cancelling', retry: 'Cancelling', '2xx': 'Accepted', failure: 'Failed' },
  // After the final response nothing changes the outcome; no retry can be asked for any more.
  Accepted: { provisional: 'Accepted', cancel: 'Accepted', '2xx': 'Accepted', failure: 'Accepted' },
  Failed: { provisional: 'Failed', cancel: 'Failed', '2xx': 'Failed', failure: 'Failed' },
};

/** The state after `event` (itself for "stay"); throws IllegalTransitionError for an event the state refuses. Pure. */
export const nextOutboundCallState: (state: OutboundCallState, event: OutboundCallEvent) => OutboundCallState = nextStateFrom('OutboundCall', TABLE);

/** A final response settled the INVITE. */
export const isFinalOutboundCallState = (state: OutboundCallState): boolean => state === 'Accepted' || state === 'Failed';
