/**
 * @module INVITE client transaction states (RFC 3261 §17.1.1, Figure 5, with the Accepted state
 * of RFC 6026 §7.2): the state type, the pure next-state function and the
 * transaction class whose one `transition(to)` owns the timers.
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
import { SipHeaders, SipRequest, type SipResponse } from '../messages/sip-message.js';
import { assertEdge, deriveEdges, type EdgeGraph } from './transaction-state.js';
import { timerValues, type TimerValues } from './timers.js';
import {
  responseClass, sendGuarded, timerSettings, TimerSet,
  type ClientTransactionUser, type TransactionOptions, type TransactionSender,
} from './transaction.js';

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

/** Legal state-to-state edges, derived from the next-state function below (self-loops are actions, not edges). */
export const INVITE_CLIENT_EDGES: EdgeGraph<InviteClientState> = deriveEdges(INVITE_CLIENT_STATES, INVITE_CLIENT_EVENTS, nextInviteClientState);

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

type InviteClientTimer = 'A' | 'B' | 'D' | 'M';

/** Sends one INVITE, retransmits it on UDP, ACKs non-2xx finals and reports responses to its TU. */
export class InviteClientTransaction {
  readonly request: SipRequest;
  /** The branch of the top Via: the transaction id (§17.1.3). */
  readonly id: string;
  #state: InviteClientState = 'Calling';
  readonly #sender: TransactionSender;
  readonly #user: ClientTransactionUser;
  readonly #timers: TimerSet<InviteClientTimer>;
  readonly #values: TimerValues;
  #timerA: number;
  #ack: SipRequest | undefined;

  constructor(request: SipRequest, sender: TransactionSender, user: ClientTransactionUser, options: TransactionOptions) {
    this.request = request;
    this.id = request.topVia.branch ?? '';
    this.#sender = sender;
    this.#user = user;
    this.#timers = new TimerSet(options.clock);
    this.#values = timerValues(timerSettings(options), sender.reliable);
    this.#timerA = this.#values.TIMER_A;
  }

  get state(): InviteClientState {
    return this.#state;
  }

  /** §17.1.1.2: send the INVITE, start Timer A (unreliable transports only) and Timer B. */
  start(): void {
    this.#send(this.request);
    if (!this.#sender.reliable) this.#timers.start('A', this.#timerA, () => this.#on('timer-A'));
    this.#timers.start('B', this.#values.TIMER_B, () => this.#on('timer-B'));
  }

  /** A response matched to this transaction by the transport layer (§17.1.3). */
  receiveResponse(response: SipResponse): void {
    this.#on(responseClass(response.status), response);
  }

  /** Ends the transaction now (the UA is shutting down). */
  dispose(): void {
    if (this.#state !== 'Terminated') this.transition('Terminated');
  }

  #on(event: InviteClientEvent, response?: SipResponse): void {
    const from = this.#state;
    const to = nextInviteClientState(from, event);
    if (to === undefined) return; // Not accepted in this state: a stray response or late timer.
    if (to !== from) this.transition(to);
    switch (event) {
      case 'timer-A':
        // §17.1.1.2: retransmit and double Timer A.
        this.#send(this.request);
        this.#timerA *= 2;
        this.#timers.start('A', this.#timerA, () => this.#on('timer-A'));
        return;
      case 'timer-B':
        this.#user.onTimeout?.();
        return;
      case '1xx':
      case '2xx':
        if (response) this.#user.onResponse?.(response);
        return;
      case '300-699':
        if (!response) return;
        // §17.1.1.2: ACK every copy; only the first goes to the TU.
        this.#ack ??= this.#buildAck(response);
        this.#send(this.#ack);
        if (from !== 'Completed') this.#user.onResponse?.(response);
        return;
      default:
        return;
    }
  }

  /**
   * The one method that changes state: validates the edge, clears and starts the timers bound to
   * states, and reports termination.
   */
  transition(to: InviteClientState): void {
    assertEdge('InviteClientTransaction', INVITE_CLIENT_EDGES, this.#state, to);
    this.#timers.clearAll();
    this.#state = to;
    switch (to) {
      case 'Calling':
      case 'Proceeding':
        return;
      case 'Accepted':
        this.#timers.start('M', this.#values.TIMER_M, () => this.#on('timer-M'));
        return;
      case 'Completed':
        this.#timers.start('D', this.#values.TIMER_D, () => this.#on('timer-D'));
        return;
      case 'Terminated':
        this.#user.onTerminated?.();
        return;
    }
  }

  #send(message: SipRequest): void {
    sendGuarded(this.#sender, message, (err) => {
      if (this.#state === 'Terminated') return;
      this.#on('transport-error');
      this.#user.onTransportError?.(err);
    });
  }

  /**
   * §17.1.1.3: the ACK for a non-2xx has the INVITE's Request-URI, Call-ID, From, CSeq number and
   * single top Via, the To of the response (with its tag), and the INVITE's Route headers.
   */
  #buildAck(response: SipResponse): SipRequest {
    const inv = this.request;
    const h = new SipHeaders();
    h.append('Via', inv.headers.getAll('Via')[0] ?? '');
    for (const r of inv.headers.getAllFields('Route')) h.append('Route', r);
    h.append('Max-Forwards', '70');
    h.append('From', inv.headers.get('From') ?? '');
    h.append('To', response.headers.get('To') ?? '');
    h.append('Call-ID', inv.callId);
    h.append('CSeq', `${inv.cseq.seq} ACK`);
    h.append('Content-Length', '0');
    return new SipRequest('ACK', inv.uri, h);
  }
}
