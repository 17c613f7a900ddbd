/**
 * @module Non-INVITE server transaction states (RFC 3261 §17.2.2, Figure 8) and the pure
 * next-state function.
 *
 * ```
 *                      request received, passed to TU
 *                               |
 *      request: discard   +-----v----+
 *               +-------->|  Trying  |
 *               +---------+----------+
 *              1xx from TU |       | 200-699 from TU
 *                          v       |
 *   request: resend 1xx +------------+  transport error
 *   1xx from TU     +-->| Proceeding |----------------------+
 *                   +---+------------+                      |
 *                200-699 from TU |  |                       |
 *                          v     v  v                       |
 *     request: resend   +-----------+  transport error      |
 *     final response    | Completed |---------------------->|
 *                       +-----------+                       |
 *                             | Timer J                     |
 *                             v                             |
 *                       +------------+<---------------------+
 *                       | Terminated |
 *                       +------------+
 * ```
 */
import type { EdgeGraph } from './transaction-state.js';

/**
 * - Trying: request received and passed to the TU; retransmits are discarded.
 * - Proceeding: a 1xx was sent; retransmits get it again.
 * - Completed: a final response was sent; retransmits get it again until Timer J.
 * - Terminated: done.
 */
export type NonInviteServerState = 'Trying' | 'Proceeding' | 'Completed' | 'Terminated';

export type NonInviteServerEvent = 'request' | 'tu-1xx' | 'tu-200-699' | 'timer-J' | 'transport-error';

export const NON_INVITE_SERVER_STATES: readonly NonInviteServerState[] = ['Trying', 'Proceeding', 'Completed', 'Terminated'];
export const NON_INVITE_SERVER_EVENTS: readonly NonInviteServerEvent[] = ['request', 'tu-1xx', 'tu-200-699', 'timer-J', 'transport-error'];

export const NON_INVITE_SERVER_EDGES: EdgeGraph<NonInviteServerState> = {
  Trying: ['Proceeding', 'Completed'],
  Proceeding: ['Completed', 'Terminated'],
  Completed: ['Terminated'],
  Terminated: [],
};

/** The state after `event`, `state` itself for "stay and act", undefined when not accepted. */
export function nextNonInviteServerState(state: NonInviteServerState, event: NonInviteServerEvent): NonInviteServerState | undefined {
  switch (state) {
    case 'Trying':
      switch (event) {
        case 'request': return 'Trying';
        case 'tu-1xx': return 'Proceeding';
        case 'tu-200-699': return 'Completed';
        default: return undefined;
      }
    case 'Proceeding':
      switch (event) {
        case 'request': case 'tu-1xx': return 'Proceeding';
        case 'tu-200-699': return 'Completed';
        case 'transport-error': return 'Terminated';
        default: return undefined;
      }
    case 'Completed':
      // §17.2.2: other final responses from the TU are discarded.
      if (event === 'request') return 'Completed';
      return event === 'timer-J' || event === 'transport-error' ? 'Terminated' : undefined;
    case 'Terminated':
      return undefined;
  }
}
