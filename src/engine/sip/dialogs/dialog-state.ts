/**
 * @module Dialog states (RFC 3261 §12) and the pure next-state function.
 *
 * ```
 *   1xx with To tag (UAC) /        2xx (UAC) / 2xx sent (UAS)
 *   1xx sent (UAS)                        |
 *        |                                v
 *   +---------+  2xx  +-----------+  2xx retransmit, re-INVITE,
 *   |  Early  |------>| Confirmed |  target refresh (stay)
 *   +---------+       +-----------+
 *    |  1xx: stay        | BYE sent or received, ACK timeout,
 *    | 300-699, BYE,     | session expired
 *    | other fork's 2xx  |
 *    v                   v
 *   +-------------------------+
 *   |       Terminated        |
 *   +-------------------------+
 * ```
 */
import { deriveEdges, type EdgeGraph } from '../transactions/transaction-state.js';

/**
 * - Early: created by a 1xx with a To tag (§12.1); may still fail.
 * - Confirmed: a 2xx established it; in-dialog requests may flow.
 * - Terminated: BYE, a failure of the initial INVITE, an ACK timeout or session expiry ended it.
 */
export type DialogState = 'Early' | 'Confirmed' | 'Terminated';

/** Inputs that move a dialog. */
export type DialogEvent = '1xx' | '2xx' | '300-699' | 'BYE' | 'ack-timeout' | 'session-expired' | 'other-fork-2xx';

export const DIALOG_STATES: readonly DialogState[] = ['Early', 'Confirmed', 'Terminated'];
export const DIALOG_EVENTS: readonly DialogEvent[] = ['1xx', '2xx', '300-699', 'BYE', 'ack-timeout', 'session-expired', 'other-fork-2xx'];

/** Legal state-to-state edges, derived from the next-state function below (self-loops are actions, not edges). */
export const DIALOG_EDGES: EdgeGraph<DialogState> = deriveEdges(DIALOG_STATES, DIALOG_EVENTS, nextDialogState);

/** The state after `event`, `state` itself for "stay", undefined when the event is not accepted. */
export function nextDialogState(state: DialogState, event: DialogEvent): DialogState | undefined {
  switch (state) {
    case 'Early':
      switch (event) {
        case '1xx': return 'Early';
        case '2xx': return 'Confirmed';
        // §12.3: a non-2xx final response to the initial INVITE ends early dialogs; §15: BYE may end an early dialog.
        case '300-699': case 'BYE': return 'Terminated';
        // §13.2.2.4: the UAC took a 2xx from another fork (another To tag); this early dialog is dropped.
        case 'other-fork-2xx': return 'Terminated';
        default: return undefined;
      }
    case 'Confirmed':
      switch (event) {
        // §13.2.2.4: 2xx retransmissions of the initial INVITE are re-ACKed in the same dialog.
        case '2xx': return 'Confirmed';
        case 'BYE': case 'ack-timeout': case 'session-expired': return 'Terminated';
        default: return undefined;
      }
    case 'Terminated':
      return undefined;
  }
}
