/**
 * @module INVITE server transaction states (RFC 3261 §17.2.1, Figure 7, with the Accepted state
 * of RFC 6026 §7.1): the state type, the pure next-state function and the
 * transaction class whose one `transition(to)` owns the timers.
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
import { InvariantError } from '../../../common/errors.js';
import type { SipRequest, SipResponse } from '../messages/sip-message.js';
import { assertEdge, deriveEdges, type EdgeGraph } from './transaction-state.js';
import { timerValues, type TimerValues } from './timers.js';
import {
  responseClass, sendGuarded, timerSettings, TimerSet, wireBytes,
  type ServerTransactionUser, type TransactionOptions, type TransactionSender,
} from './transaction.js';

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

/** Legal state-to-state edges, derived from the next-state function below (self-loops are actions, not edges). */
export const INVITE_SERVER_EDGES: EdgeGraph<InviteServerState> = deriveEdges(INVITE_SERVER_STATES, INVITE_SERVER_EVENTS, nextInviteServerState);

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

type InviteServerTimer = 'G' | 'H' | 'I' | 'L';

/**
 * Absorbs INVITE retransmissions, resends the last response, retransmits non-2xx finals until the
 * ACK. Once final it keeps no parsed message: the request is released and a non-2xx final is kept
 * as its wire bytes only (see {@link wireBytes}).
 */
export class InviteServerTransaction {
  /** The matching key (see transaction-key.ts). */
  readonly id: string;
  #state: InviteServerState = 'Proceeding';
  readonly #sender: TransactionSender;
  readonly #user: ServerTransactionUser;
  readonly #timers: TimerSet<InviteServerTimer>;
  readonly #values: TimerValues;
  #timerG: number;
  #request: SipRequest | null;
  /** The last provisional response, while Proceeding. */
  #provisional: SipResponse | undefined;
  /** The 300-699 final as sent, while Completed (resent by Timer G and for retransmitted INVITEs). */
  #finalBytes: Buffer | undefined;

  constructor(id: string, request: SipRequest, sender: TransactionSender, user: ServerTransactionUser, options: TransactionOptions) {
    this.id = id;
    this.#request = request;
    this.#sender = sender;
    this.#user = user;
    this.#timers = new TimerSet(options.clock);
    this.#values = timerValues(timerSettings(options), sender.reliable);
    this.#timerG = this.#values.TIMER_G;
  }

  get state(): InviteServerState {
    return this.#state;
  }

  /** The INVITE; only while Proceeding (the TU answers it, or a CANCEL is matched to it). */
  get request(): SipRequest {
    if (this.#request === null) throw new InvariantError(`the INVITE of transaction ${this.id} was released when it left Proceeding (${this.#state})`);
    return this.#request;
  }

  /** The last provisional response sent while Proceeding, if any (a CANCEL's 200 reuses its To tag). */
  get lastResponse(): SipResponse | undefined {
    return this.#provisional;
  }

  /** Whether the TU has sent a response on this transaction (or it has ended): only a 1xx leaves it Proceeding. */
  get responded(): boolean {
    return this.#state !== 'Proceeding' || this.#provisional !== undefined;
  }

  /** A retransmitted INVITE or an ACK matched to this transaction (§17.2.3). */
  receiveRequest(request: SipRequest): void {
    this.#on(request.method === 'ACK' ? 'ACK' : 'INVITE', undefined, request);
  }

  /** A response from the TU. */
  respond(response: SipResponse): void {
    const cls = responseClass(response.status);
    this.#on(cls === '1xx' ? 'tu-1xx' : cls === '2xx' ? 'tu-2xx' : 'tu-300-699', response);
  }

  dispose(): void {
    if (this.#state !== 'Terminated') this.transition('Terminated');
  }

  #on(event: InviteServerEvent, response?: SipResponse, request?: SipRequest): void {
    const from = this.#state;
    const to = nextInviteServerState(from, event);
    if (to === undefined) return;
    if (event === 'tu-1xx') this.#provisional = response;
    if (to !== from) this.transition(to);
    switch (event) {
      case 'tu-1xx': case 'tu-2xx':
        if (response) this.#send(response);
        return;
      case 'tu-300-699':
        if (response) {
          this.#finalBytes = wireBytes(response);
          this.#send(this.#finalBytes);
        }
        return;
      case 'INVITE':
        // §17.2.1: resend the most recent response in Proceeding and Completed; absorb otherwise.
        this.#resendLast(from);
        return;
      case 'ACK':
        if (from === 'Accepted' && request) this.#user.onAck?.(request);
        return;
      case 'timer-G':
        this.#resendLast(from);
        this.#timerG = Math.min(2 * this.#timerG, this.#values.T2);
        this.#timers.start('G', this.#timerG, () => this.#on('timer-G'));
        return;
      case 'timer-H':
        this.#user.onTimeout?.();
        return;
      default:
        return;
    }
  }

  #resendLast(state: InviteServerState): void {
    if (state === 'Proceeding' && this.#provisional) this.#send(this.#provisional);
    else if (state === 'Completed' && this.#finalBytes) this.#send(this.#finalBytes);
  }

  /** The one method that changes state and owns the timers bound to states. */
  transition(to: InviteServerState): void {
    assertEdge('InviteServerTransaction', INVITE_SERVER_EDGES, this.#state, to);
    this.#timers.clearAll();
    this.#state = to;
    if (to !== 'Proceeding') {
      // Final: nothing reads the INVITE or the provisional again; let them die young.
      this.#request = null;
      this.#provisional = undefined;
    }
    if (to === 'Terminated' || to === 'Confirmed') this.#finalBytes = undefined;
    switch (to) {
      case 'Proceeding':
        return;
      case 'Accepted':
        this.#timers.start('L', this.#values.TIMER_L, () => this.#on('timer-L'));
        return;
      case 'Completed':
        if (!this.#sender.reliable) this.#timers.start('G', this.#timerG, () => this.#on('timer-G'));
        this.#timers.start('H', this.#values.TIMER_H, () => this.#on('timer-H'));
        return;
      case 'Confirmed':
        this.#timers.start('I', this.#values.TIMER_I, () => this.#on('timer-I'));
        return;
      case 'Terminated':
        this.#user.onTerminated?.();
        return;
    }
  }

  #send(response: SipResponse | Buffer): void {
    sendGuarded(this.#sender, response, (err) => {
      if (this.#state === 'Terminated') return;
      this.#on('transport-error');
      this.#user.onTransportError?.(err);
    });
  }
}
