/**
 * @module Non-INVITE server transaction states (RFC 3261 §17.2.2, Figure 8): the state type, the pure
 * next-state function and the transaction class whose one `transition(to)` owns the timers.
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
import { InvariantError } from '../../../common/errors.js';
import type { SipRequest, SipResponse } from '../messages/sip-message.js';
import { assertEdge, deriveEdges, type EdgeGraph } from './transaction-state.js';
import { timerValues, type TimerValues } from './timers.js';
import { sendGuarded, timerSettings, TimerSet, wireBytes, type ServerTransactionUser, type TransactionOptions, type TransactionSender } from './transaction.js';

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

/** Legal state-to-state edges, derived from the next-state function below (self-loops are actions, not edges). */
export const NON_INVITE_SERVER_EDGES: EdgeGraph<NonInviteServerState> = deriveEdges(NON_INVITE_SERVER_STATES, NON_INVITE_SERVER_EVENTS, nextNonInviteServerState);

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

/**
 * Answers retransmitted requests with the last response and lingers for Timer J. Once final it
 * keeps no parsed message: the request is released and the final response is kept as its wire
 * bytes only (see {@link wireBytes}).
 */
export class NonInviteServerTransaction {
  readonly id: string;
  #state: NonInviteServerState = 'Trying';
  readonly #sender: TransactionSender;
  readonly #user: ServerTransactionUser;
  readonly #timers: TimerSet<'J'>;
  readonly #values: TimerValues;
  #request: SipRequest | null;
  /** The last provisional response, while Proceeding. */
  #provisional: SipResponse | undefined;
  /** The final response as sent, while Completed. */
  #finalBytes: Buffer | undefined;

  constructor(id: string, request: SipRequest, sender: TransactionSender, user: ServerTransactionUser, options: TransactionOptions) {
    this.id = id;
    this.#request = request;
    this.#sender = sender;
    this.#user = user;
    this.#timers = new TimerSet(options.clock);
    this.#values = timerValues(timerSettings(options), sender.reliable);
  }

  get state(): NonInviteServerState {
    return this.#state;
  }

  /** The request; only until the final response (Trying and Proceeding). */
  get request(): SipRequest {
    if (this.#request === null) throw new InvariantError(`the request of transaction ${this.id} was released with its final response (${this.#state})`);
    return this.#request;
  }

  /** A retransmission of the request (§17.2.3). */
  receiveRequest(_request: SipRequest): void {
    this.#on('request');
  }

  respond(response: SipResponse): void {
    this.#on(response.status < 200 ? 'tu-1xx' : 'tu-200-699', response);
  }

  dispose(): void {
    if (this.#state !== 'Terminated') this.transition('Terminated');
  }

  #on(event: NonInviteServerEvent, response?: SipResponse): void {
    const from = this.#state;
    const to = nextNonInviteServerState(from, event);
    if (to === undefined) return;
    if (event === 'tu-1xx') this.#provisional = response;
    if (to !== from) this.transition(to);
    switch (event) {
      case 'tu-1xx':
        if (response) this.#send(response);
        return;
      case 'tu-200-699':
        if (response) {
          this.#finalBytes = wireBytes(response);
          this.#send(this.#finalBytes);
        }
        return;
      case 'request':
        // §17.2.2: discarded in Trying; the last response is resent in Proceeding and Completed.
        if (from === 'Proceeding' && this.#provisional) this.#send(this.#provisional);
        else if (from === 'Completed' && this.#finalBytes) this.#send(this.#finalBytes);
        return;
      default:
        return;
    }
  }

  /** The one method that changes state and owns Timer J. */
  transition(to: NonInviteServerState): void {
    assertEdge('NonInviteServerTransaction', NON_INVITE_SERVER_EDGES, this.#state, to);
    this.#timers.clearAll();
    this.#state = to;
    if (to === 'Completed' || to === 'Terminated') {
      // Final: nothing reads the request or the provisional again; let them die young.
      this.#request = null;
      this.#provisional = undefined;
    }
    if (to === 'Terminated') this.#finalBytes = undefined;
    if (to === 'Completed') this.#timers.start('J', this.#values.TIMER_J, () => this.#on('timer-J'));
    if (to === 'Terminated') this.#user.onTerminated?.();
  }

  #send(response: SipResponse | Buffer): void {
    sendGuarded(this.#sender, response, (err) => {
      if (this.#state === 'Terminated') return;
      this.#on('transport-error');
      this.#user.onTransportError?.(err);
    });
  }
}
