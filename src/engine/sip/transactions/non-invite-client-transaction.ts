/**
 * @module Non-INVITE client transaction states (RFC 3261 §17.1.2, Figure 6): the state type, the pure
 * next-state function and the transaction class whose one `transition(to)` owns the timers.
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
import type { SipRequest, SipResponse } from '../messages/sip-message.js';
import { assertEdge, deriveEdges, type EdgeGraph } from './transaction-state.js';
import { timerValues, type TimerValues } from './timers.js';
import { sendGuarded, timerSettings, TimerSet, type ClientTransactionUser, type TransactionOptions, type TransactionSender } from './transaction.js';

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

/** Legal state-to-state edges, derived from the next-state function below (self-loops are actions, not edges). */
export const NON_INVITE_CLIENT_EDGES: EdgeGraph<NonInviteClientState> = deriveEdges(NON_INVITE_CLIENT_STATES, NON_INVITE_CLIENT_EVENTS, nextNonInviteClientState);

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

type NonInviteClientTimer = 'E' | 'F' | 'K';

/** Sends one non-INVITE request, retransmits it on UDP and reports its responses to the TU. */
export class NonInviteClientTransaction {
  readonly request: SipRequest;
  readonly id: string;
  #state: NonInviteClientState = 'Trying';
  readonly #sender: TransactionSender;
  readonly #user: ClientTransactionUser;
  readonly #timers: TimerSet<NonInviteClientTimer>;
  readonly #values: TimerValues;
  #timerE: number;

  constructor(request: SipRequest, sender: TransactionSender, user: ClientTransactionUser, options: TransactionOptions) {
    this.request = request;
    this.id = request.topVia.branch ?? '';
    this.#sender = sender;
    this.#user = user;
    this.#timers = new TimerSet(options.clock);
    this.#values = timerValues(timerSettings(options), sender.reliable);
    this.#timerE = this.#values.TIMER_E;
  }

  get state(): NonInviteClientState {
    return this.#state;
  }

  /** §17.1.2.2: send, start Timer E (unreliable only) and Timer F. */
  start(): void {
    this.#send();
    if (!this.#sender.reliable) this.#timers.start('E', this.#timerE, () => this.#on('timer-E'));
    this.#timers.start('F', this.#values.TIMER_F, () => this.#on('timer-F'));
  }

  receiveResponse(response: SipResponse): void {
    this.#on(response.status < 200 ? '1xx' : '200-699', response);
  }

  dispose(): void {
    if (this.#state !== 'Terminated') this.transition('Terminated');
  }

  #on(event: NonInviteClientEvent, response?: SipResponse): void {
    const from = this.#state;
    const to = nextNonInviteClientState(from, event);
    if (to === undefined) return;
    if (to !== from) this.transition(to);
    switch (event) {
      case 'timer-E':
        // §17.1.2.2: double up to T2 in Trying; in Proceeding always T2.
        this.#send();
        this.#timerE = to === 'Proceeding' ? this.#values.T2 : Math.min(2 * this.#timerE, this.#values.T2);
        this.#timers.start('E', this.#timerE, () => this.#on('timer-E'));
        return;
      case 'timer-F':
        this.#user.onTimeout?.();
        return;
      case '1xx':
      case '200-699':
        // Retransmitted responses are absorbed in Completed.
        if (response && from !== 'Completed') this.#user.onResponse?.(response);
        return;
      default:
        return;
    }
  }

  /** The one method that changes state and owns the timers bound to states. */
  transition(to: NonInviteClientState): void {
    assertEdge('NonInviteClientTransaction', NON_INVITE_CLIENT_EDGES, this.#state, to);
    const from = this.#state;
    this.#state = to;
    switch (to) {
      case 'Trying':
        return;
      case 'Proceeding':
        // Timers E and F keep running (§17.1.2.2); E continues at T2 on its next expiry.
        return;
      case 'Completed':
        this.#timers.clearAll();
        this.#timers.start('K', this.#values.TIMER_K, () => this.#on('timer-K'));
        return;
      case 'Terminated':
        this.#timers.clearAll();
        if (from !== 'Terminated') this.#user.onTerminated?.();
        return;
    }
  }

  #send(): void {
    sendGuarded(this.#sender, this.request, (err) => {
      if (this.#state === 'Terminated') return;
      this.#on('transport-error');
      this.#user.onTransportError?.(err);
    });
  }
}
