/** @module The INVITE server transaction (RFC 3261 §17.2.1, RFC 6026 §7.1). */
import type { SipRequest, SipResponse } from '../messages/sip-message.js';
import { assertEdge } from './transaction-state.js';
import { INVITE_SERVER_EDGES, nextInviteServerState, type InviteServerEvent, type InviteServerState } from './invite-server-state.js';
import { timerValues, type TimerValues } from './timers.js';
import {
  responseClass, sendGuarded, timerSettings, TimerSet,
  type ServerTransactionUser, type TransactionOptions, type TransactionSender,
} from './transaction.js';

type InviteServerTimer = 'G' | 'H' | 'I' | 'L';

/** Absorbs INVITE retransmissions, resends the last response, retransmits non-2xx finals until the ACK. */
export class InviteServerTransaction {
  readonly request: SipRequest;
  /** The matching key (see transaction-key.ts). */
  readonly id: string;
  #state: InviteServerState = 'Proceeding';
  readonly #sender: TransactionSender;
  readonly #user: ServerTransactionUser;
  readonly #timers: TimerSet<InviteServerTimer>;
  readonly #values: TimerValues;
  #timerG: number;
  #lastResponse: SipResponse | undefined;

  constructor(id: string, request: SipRequest, sender: TransactionSender, user: ServerTransactionUser, options: TransactionOptions) {
    this.id = id;
    this.request = request;
    this.#sender = sender;
    this.#user = user;
    this.#timers = new TimerSet(options.clock);
    this.#values = timerValues(timerSettings(options), sender.reliable);
    this.#timerG = this.#values.TIMER_G;
  }

  get state(): InviteServerState {
    return this.#state;
  }

  /** The last response sent, if any (the TU reads the To tag it chose). */
  get lastResponse(): SipResponse | undefined {
    return this.#lastResponse;
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
    if (response) this.#lastResponse = response;
    if (to !== from) this.transition(to);
    switch (event) {
      case 'tu-1xx': case 'tu-2xx': case 'tu-300-699':
        if (response) this.#send(response);
        return;
      case 'INVITE':
        // §17.2.1: resend the most recent response in Proceeding and Completed; absorb otherwise.
        if ((from === 'Proceeding' || from === 'Completed') && this.#lastResponse) this.#send(this.#lastResponse);
        return;
      case 'ACK':
        if (from === 'Accepted' && request) this.#user.onAck?.(request);
        return;
      case 'timer-G':
        if (this.#lastResponse) this.#send(this.#lastResponse);
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

  /** The one method that changes state and owns the timers bound to states. */
  transition(to: InviteServerState): void {
    assertEdge('InviteServerTransaction', INVITE_SERVER_EDGES, this.#state, to);
    this.#timers.clearAll();
    this.#state = to;
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

  #send(response: SipResponse): void {
    sendGuarded(this.#sender, response, (err) => {
      if (this.#state === 'Terminated') return;
      this.#on('transport-error');
      this.#user.onTransportError?.(err);
    });
  }
}
