/** @module The non-INVITE server transaction (RFC 3261 §17.2.2). */
import type { SipRequest, SipResponse } from '../messages/sip-message.js';
import { assertEdge } from './transaction-state.js';
import { NON_INVITE_SERVER_EDGES, nextNonInviteServerState, type NonInviteServerEvent, type NonInviteServerState } from './non-invite-server-state.js';
import { timerValues, type TimerValues } from './timers.js';
import { sendGuarded, timerSettings, TimerSet, type ServerTransactionUser, type TransactionOptions, type TransactionSender } from './transaction.js';

/** Answers retransmitted requests with the last response and lingers for Timer J. */
export class NonInviteServerTransaction {
  readonly request: SipRequest;
  readonly id: string;
  #state: NonInviteServerState = 'Trying';
  readonly #sender: TransactionSender;
  readonly #user: ServerTransactionUser;
  readonly #timers: TimerSet<'J'>;
  readonly #values: TimerValues;
  #lastResponse: SipResponse | undefined;

  constructor(id: string, request: SipRequest, sender: TransactionSender, user: ServerTransactionUser, options: TransactionOptions) {
    this.id = id;
    this.request = request;
    this.#sender = sender;
    this.#user = user;
    this.#timers = new TimerSet(options.clock);
    this.#values = timerValues(timerSettings(options), sender.reliable);
  }

  get state(): NonInviteServerState {
    return this.#state;
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
    if (response) this.#lastResponse = response;
    if (to !== from) this.transition(to);
    switch (event) {
      case 'tu-1xx': case 'tu-200-699':
        if (response) this.#send(response);
        return;
      case 'request':
        // §17.2.2: discarded in Trying; the last response is resent in Proceeding and Completed.
        if (from !== 'Trying' && this.#lastResponse) this.#send(this.#lastResponse);
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
    if (to === 'Completed') this.#timers.start('J', this.#values.TIMER_J, () => this.#on('timer-J'));
    if (to === 'Terminated') this.#user.onTerminated?.();
  }

  #send(response: SipResponse): void {
    sendGuarded(this.#sender, response, (err) => {
      if (this.#state === 'Terminated') return;
      this.#on('transport-error');
      this.#user.onTransportError?.(err);
    });
  }
}
