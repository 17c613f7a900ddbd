/**
 * @module INVITE server transaction states (RFC 3261 §17.2.1, Figure 7, with the Accepted state
 * of RFC 6026 §7.1) and the pure next-state function.
 *
 * ```
 *                 INVITE received, 100 Trying sent
 *                              |
 *   INVITE: resend  +----------v-+  1xx from TU: send
 *   last response   | Proceeding |<----+
 *        +--------->|            |-----+
 *        +----------+------------+------------------------+
 *          2xx from TU |     | 300-699 from TU            | transport error
 *                      v     v                            |
 *  INVITE: absorb +----------+   +-----------+ INVITE: resend response
 *  ACK: to TU     | Accepted |   | Completed |<----+ Timer G: resend
 *  2xx from TU    +----------+   +-----------+-----+               |
 *                     |  Timer L    | ACK     | Timer H / error   |
 *                     |             v         |                   |
 *                     |      +-----------+    |                   |
 *                     |      | Confirmed |  INVITE/ACK absorbed   |
 *                     |      +-----------+    |                   |
 *                     |          | Timer I    |                   |
 *                     v          v            v                   |
 *                   +--------------------------+                  |
 *                   |        Terminated        |<-----------------+
 *                   +--------------------------+
 * ```
 */
import type { EdgeGraph } from './transaction-state.js';

/**
 * - Proceeding: INVITE received; provisional responses from the TU are sent.
 * - Accepted: the TU sent a 2xx; INVITE retransmits are absorbed, ACKs go to the TU (Timer L).
 * - Completed: a 300-699 was sent; Timer G resends it on UDP until the ACK or Timer H.
 * - Confirmed: the ACK arrived; stray ACKs are absorbed until Timer I.
 * - Terminated: done.
 */
export type InviteServerState = 'Proceeding' | 'Accepted' | 'Completed' | 'Confirmed' | 'Terminated';

/** Inputs: requests from the wire, responses from the TU, timers, transport failure. */
export type InviteServerEvent =
  | 'INVITE' | 'ACK'
  | 'tu-1xx' | 'tu-2xx' | 'tu-300-699'
  | 'timer-G' | 'timer-H' | 'timer-I' | 'timer-L'
  | 'transport-error';

export const INVITE_SERVER_STATES: readonly InviteServerState[] = ['Proceeding', 'Accepted', 'Completed', 'Confirmed', 'Terminated'];
export const INVITE_SERVER_EVENTS: readonly InviteServerEvent[] = ['INVITE', 'ACK', 'tu-1xx', 'tu-2xx', 'tu-300-699', 'timer-G', 'timer-H', 'timer-I', 'timer-L', 'transport-error'];

export const INVITE_SERVER_EDGES: EdgeGraph<InviteServerState> = {
  Proceeding: ['Accepted', 'Completed', 'Terminated'],
  Accepted: ['Terminated'],
  Completed: ['Confirmed', 'Terminated'],
  Confirmed: ['Terminated'],
  Terminated: [],
};

/** The state after `event`, `state` itself for "stay and act", undefined when not accepted. */
export function nextInviteServerState(state: InviteServerState, event: InviteServerEvent): InviteServerState | undefined {
  switch (state) {
    case 'Proceeding':
      switch (event) {
        // §17.2.1: a retransmitted INVITE gets the most recent provisional response again.
        case 'INVITE': case 'tu-1xx': return 'Proceeding';
        case 'tu-2xx': return 'Accepted';
        case 'tu-300-699': return 'Completed';
        case 'transport-error': return 'Terminated';
        default: return undefined;
      }
    case 'Accepted':
      switch (event) {
        // RFC 6026 §7.1: absorb INVITE retransmits, pass ACKs and further 2xx through.
        case 'INVITE': case 'ACK': case 'tu-2xx': return 'Accepted';
        case 'timer-L': return 'Terminated';
        default: return undefined;
      }
    case 'Completed':
      switch (event) {
        case 'INVITE': case 'timer-G': return 'Completed';
        case 'ACK': return 'Confirmed';
        case 'timer-H': case 'transport-error': return 'Terminated';
        default: return undefined;
      }
    case 'Confirmed':
      // §17.2.1: "absorb any additional ACK messages that arrive".
      if (event === 'INVITE' || event === 'ACK') return 'Confirmed';
      return event === 'timer-I' ? 'Terminated' : undefined;
    case 'Terminated':
      return undefined;
  }
}
