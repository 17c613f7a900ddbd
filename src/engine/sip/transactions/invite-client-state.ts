/**
 * @module INVITE client transaction states (RFC 3261 §17.1.1, Figure 5, with the Accepted state
 * of RFC 6026 §7.2) and the pure next-state function.
 *
 * ```
 *                    INVITE sent, Timer A, Timer B
 *                               |
 *          Timer A: resend +----v----+  Timer B / transport error
 *               +--------->| Calling |-----------------------------+
 *               +----------+---------+                             |
 *                    1xx |    | 2xx         | 300-699              |
 *                        v    |             | ACK sent             |
 *     1xx  +------------+    |             |                      |
 *     +--->| Proceeding |    |             |                      |
 *     +----+------------+    |             |                      |
 *        2xx |    | 300-699  |             |                      |
 *            v    +----------|---------+   |                      |
 *      +----------+<---------+         v   v                      |
 *  2xx | Accepted |            +-----------+ 300-699: resend ACK   |
 *  to  +----------+            | Completed |<-----+               |
 *  TU+--^   | Timer M          +-----------+------+               |
 *           v                        | Timer D / transport error  |
 *      +------------+<---------------+                            |
 *      | Terminated |<--------------------------------------------+
 *      +------------+
 * ```
 */
import type { EdgeGraph } from './transaction-state.js';

/**
 * - Calling: INVITE sent, no response yet; Timer A retransmits on UDP, Timer B gives up.
 * - Proceeding: a provisional response arrived; no more retransmissions.
 * - Accepted: a 2xx arrived; further 2xx (retransmits, forks) go to the TU until Timer M.
 * - Completed: a 300-699 arrived and was ACKed; retransmits of it are ACKed again until Timer D.
 * - Terminated: done; the transaction is removed.
 */
export type InviteClientState = 'Calling' | 'Proceeding' | 'Accepted' | 'Completed' | 'Terminated';

/** Inputs to the machine: responses by class, timer expiries, transport failure. */
export type InviteClientEvent =
  | '1xx' | '2xx' | '300-699'
  | 'timer-A' | 'timer-B' | 'timer-D' | 'timer-M'
  | 'transport-error';

export const INVITE_CLIENT_STATES: readonly InviteClientState[] = ['Calling', 'Proceeding', 'Accepted', 'Completed', 'Terminated'];
export const INVITE_CLIENT_EVENTS: readonly InviteClientEvent[] = ['1xx', '2xx', '300-699', 'timer-A', 'timer-B', 'timer-D', 'timer-M', 'transport-error'];

/** Legal state-to-state edges (self-loops are actions, not edges). */
export const INVITE_CLIENT_EDGES: EdgeGraph<InviteClientState> = {
  Calling: ['Proceeding', 'Accepted', 'Completed', 'Terminated'],
  Proceeding: ['Accepted', 'Completed', 'Terminated'],
  Accepted: ['Terminated'],
  Completed: ['Terminated'],
  Terminated: [],
};

/**
 * The state after `event` in `state`, or undefined when the event is not accepted there (the
 * caller logs and drops it). Returning `state` itself means "stay and act" (retransmit, re-ACK).
 */
export function nextInviteClientState(state: InviteClientState, event: InviteClientEvent): InviteClientState | undefined {
  switch (state) {
    case 'Calling':
      switch (event) {
        case '1xx': return 'Proceeding';
        case '2xx': return 'Accepted';
        case '300-699': return 'Completed';
        // §17.1.1.2: Timer A retransmits the INVITE and doubles.
        case 'timer-A': return 'Calling';
        case 'timer-B': case 'transport-error': return 'Terminated';
        default: return undefined;
      }
    case 'Proceeding':
      switch (event) {
        case '1xx': return 'Proceeding';
        case '2xx': return 'Accepted';
        case '300-699': return 'Completed';
        case 'transport-error': return 'Terminated';
        default: return undefined;
      }
    case 'Accepted':
      // RFC 6026 §7.2: 2xx retransmissions and forked 2xx are passed to the TU.
      if (event === '2xx') return 'Accepted';
      return event === 'timer-M' ? 'Terminated' : undefined;
    case 'Completed':
      // §17.1.1.2: a retransmitted final response is ACKed again, not passed up.
      if (event === '300-699') return 'Completed';
      return event === 'timer-D' || event === 'transport-error' ? 'Terminated' : undefined;
    case 'Terminated':
      return undefined;
  }
}
