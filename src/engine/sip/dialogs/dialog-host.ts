/** @module What a session dialog needs from the UA core, as an interface so dialogs/ does not import it. */
import type { Clock } from '../../../common/clock.js';
import type { SipMessage, SipRequest, SipResponse } from '../messages/sip-message.js';
import type { ClientTransactionUser } from '../transactions/transaction.js';
import type { TimerSettings } from '../transactions/timers.js';
import type { DigestClient } from '../auth/digest-client.js';
import type { SipTarget } from '../user-agent-core/transport-port.js';

/** Services the UA core lends to its dialogs. */
export interface DialogHost {
  readonly clock: Clock;
  readonly timers: TimerSettings;
  /** Our Contact header value for a protocol (§12.1.1: in every target refresh request and 2xx). */
  contact(protocol: SipTarget['protocol']): string;
  /** Where to send a request whose next hop is `uri` (resolution included). */
  targetFor(uri: string): SipTarget;
  sendRequest(request: SipRequest, target: SipTarget, user: ClientTransactionUser): void;
  /** Sends outside a transaction; a request without Via gets ours with a new branch (the ACK for a 2xx). */
  sendStateless(message: SipMessage, target: SipTarget): void;
  /** 200 to an in-dialog OPTIONS (§11.2). */
  optionsResponse(request: SipRequest): SipResponse;
  /** Adds Server/User-Agent and other constant headers. */
  readonly userAgent: string;
  /** Forgets a dialog when it ends. */
  removeDialog(id: string): void;
}

/** Credentials a dialog uses to answer challenges on in-dialog requests (RFC 3261 §22.2). */
export type DialogAuth = DigestClient | undefined;
