/** @module The INVITE client transaction (RFC 3261 §17.1.1, RFC 6026 §7.2). */
import { SipHeaders, SipRequest, type SipResponse } from '../messages/sip-message.js';
import { assertEdge } from './transaction-state.js';
import { INVITE_CLIENT_EDGES, nextInviteClientState, type InviteClientEvent, type InviteClientState } from './invite-client-state.js';
import { timerValues, type TimerValues } from './timers.js';
import {
  responseClass, sendGuarded, timerSettings, TimerSet,
  type ClientTransactionUser, type TransactionOptions, type TransactionSender,
} from './transaction.js';

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
