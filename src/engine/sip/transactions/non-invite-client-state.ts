/**
 * @module Non-INVITE client transaction states (RFC 3261 §17.1.2, Figure 6) and the pure
 * next-state function.
 *
 * ```
 *                    request sent, Timer E (UDP), Timer F
 *                               |
 *        Timer E: resend  +-----v----+  Timer F / transport error
 *               +-------->|  Trying  |-----------------------------+
 *               +---------+----------+                             |
 *                  1xx |        | 200-699                          |
 *                      v        |                                  |
 *   Timer E: resend +------------+  Timer F / transport error     |
 *   1xx: to TU  +-->| Proceeding |-------------------------------->|
 *               +---+------------+                                 |
 *                      | 200-699 |                                 |
 *                      v         v                                 |
 *                   +-----------+ responses absorbed               |
 *                   | Completed |                                  |
 *                   +-----------+                                  |
 *                         | Timer K                                |
 *                         v                                        |
 *                   +------------+<--------------------------------+
 *                   | Terminated |
 *                   +------------+
 * ```
 */
import type { EdgeGraph } from './transaction-state.js';

/**
 * - Trying: request sent; Timer E retransmits on UDP (doubling to T2), Timer F gives up.
 * - Proceeding: a 1xx arrived; Timer E keeps retransmitting at T2.
 * - Completed: a final response arrived; retransmits of it are absorbed until Timer K.
 * - Terminated: done.
 */
export type NonInviteClientState = 'Trying' | 'Proceeding' | 'Completed' | 'Terminated';

export type NonInviteClientEvent = '1xx' | '200-699' | 'timer-E' | 'timer-F' | 'timer-K' | 'transport-error';

export const NON_INVITE_CLIENT_STATES: readonly NonInviteClientState[] = ['Trying', 'Proceeding', 'Completed', 'Terminated'];
export const NON_INVITE_CLIENT_EVENTS: readonly NonInviteClientEvent[] = ['1xx', '200-699', 'timer-E', 'timer-F', 'timer-K', 'transport-error'];

export const NON_INVITE_CLIENT_EDGES: EdgeGraph<NonInviteClientState> = {
  Trying: ['Proceeding', 'Completed', 'Terminated'],
  Proceeding: ['Completed', 'Terminated'],
  Completed: ['Terminated'],
  Terminated: [],
};

/** The state after `event`, `state` itself for "stay and act", undefined when not accepted. */
export function nextNonInviteClientState(state: NonInviteClientState, event: NonInviteClientEvent): NonInviteClientState | undefined {
  switch (state) {
    case 'Trying':
    case 'Proceeding':
      switch (event) {
        case '1xx': return 'Proceeding';
        case '200-699': return 'Completed';
        case 'timer-E': return state;
        case 'timer-F': case 'transport-error': return 'Terminated';
        default: return undefined;
      }
    case 'Completed':
      // §17.1.2.2: the Completed state buffers response retransmissions.
      if (event === '1xx' || event === '200-699') return 'Completed';
      return event === 'timer-K' ? 'Terminated' : undefined;
    case 'Terminated':
      return undefined;
  }
}
