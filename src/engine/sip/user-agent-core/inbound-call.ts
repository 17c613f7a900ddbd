/** @module The UAS handle of an incoming INVITE (RFC 3261 §13.3): progress, accept, reject, CANCEL. */
import { createResponse } from '../messages/response.js';
import type { SipRequest, SipResponse } from '../messages/sip-message.js';
import { Dialog } from '../dialogs/dialog.js';
import type { DialogHost } from '../dialogs/dialog-host.js';
import { SessionDialog } from '../dialogs/session-dialog.js';
import { formatSessionExpires, type SessionExpires } from '../dialogs/session-timer.js';
import type { InviteServerTransaction } from '../transactions/invite-server-transaction.js';
import { randomToken } from './user-agent-core.js';
import { TypedEvents } from './typed-events.js';
import type { SipSource } from './transport-port.js';

/** Events of an {@link InboundCall}. */
export type InboundCallEvents = {
  /** The caller cancelled before a final response (§9.2); 487 was sent. */
  cancel: [request: SipRequest];
};

/** Hands an accepted dialog to the UA so later requests find it. */
export interface InboundCallRegistrar {
  addSession(session: SessionDialog): void;
  /** The call has its final response (accepted, rejected or cancelled). */
  callFinished(tx: InviteServerTransaction): void;
}

/** An incoming INVITE waiting for the application's decision. */
export class InboundCall {
  readonly request: SipRequest;
  readonly source: SipSource;
  readonly events = new TypedEvents<InboundCallEvents>();
  /** The SDP offer of the INVITE (empty when the offer is expected in our 2xx). */
  readonly offer: Buffer;
  readonly #tx: InviteServerTransaction;
  readonly #host: DialogHost;
  readonly #registrar: InboundCallRegistrar;
  readonly #localTag = randomToken();
  readonly #sessionExpires: SessionExpires | undefined;
  #final = false;

  constructor(request: SipRequest, tx: InviteServerTransaction, source: SipSource, host: DialogHost, registrar: InboundCallRegistrar, sessionExpires: SessionExpires | undefined) {
    this.request = request;
    this.source = source;
    this.offer = request.body;
    this.#tx = tx;
    this.#host = host;
    this.#registrar = registrar;
    this.#sessionExpires = sessionExpires;
  }

  /** Call-ID of the INVITE. */
  get callId(): string {
    return this.request.callId;
  }

  /** True once accepted, rejected or cancelled. */
  get isFinal(): boolean {
    return this.#final;
  }

  /** Sends a provisional response (180 Ringing, 183 Session Progress with early media SDP). */
  progress(status = 180, sdp?: Buffer): void {
    if (this.#final || status <= 100 || status >= 200) return;
    this.#tx.respond(this.#response(status, sdp));
  }

  /**
   * Sends 200 OK with the SDP answer, creates the confirmed dialog and retransmits the 2xx until
   * the ACK arrives (§13.3.1.4). Returns the session for in-dialog requests.
   */
  accept(sdp: Buffer): SessionDialog | undefined {
    if (this.#final) return undefined;
    this.#final = true;
    this.#registrar.callFinished(this.#tx);
    const res = this.#response(200, sdp);
    if (this.#sessionExpires) {
      res.headers.append('Session-Expires', formatSessionExpires(this.#sessionExpires));
      // RFC 4028 §9: Require: timer only when the UAC is the refresher (it then supports timer).
      if (this.#sessionExpires.refresher === 'uac') res.headers.append('Require', 'timer');
    }
    const dialog = Dialog.fromUas(this.request, this.#localTag, 'Confirmed');
    const session = new SessionDialog({
      dialog, host: this.#host, role: 'uas', localSdp: sdp,
      ...(this.#sessionExpires?.refresher ? { sessionExpires: { deltaSeconds: this.#sessionExpires.deltaSeconds, refresher: this.#sessionExpires.refresher } } : {}),
    });
    this.#registrar.addSession(session);
    this.#tx.respond(res);
    session.awaitAck(res, this.#tx);
    return session;
  }

  /** Sends a final failure (486 Busy Here, 603 Decline, 480...). */
  reject(status = 486, reason?: string): void {
    if (this.#final || status < 300) return;
    this.#final = true;
    this.#registrar.callFinished(this.#tx);
    this.#tx.respond(createResponse(this.request, status, reason, { toTag: this.#localTag, headers: [['Server', this.#host.userAgent]] }));
  }

  /** Called by the UA when a CANCEL matched this INVITE: 487 to the INVITE (§9.2). @internal */
  cancelled(cancel: SipRequest): void {
    if (this.#final) return;
    this.#final = true;
    this.#registrar.callFinished(this.#tx);
    this.#tx.respond(createResponse(this.request, 487, undefined, { toTag: this.#localTag }));
    this.events.emit('cancel', cancel);
  }

  #response(status: number, sdp?: Buffer): SipResponse {
    const headers: [string, string][] = [['Contact', this.#host.contact(this.source.protocol)], ['Server', this.#host.userAgent]];
    if (status === 200) headers.push(['Allow', 'INVITE, ACK, BYE, CANCEL, OPTIONS, INFO, UPDATE, REFER, NOTIFY, PRACK'], ['Supported', 'timer']);
    return createResponse(this.request, status, undefined, {
      toTag: this.#localTag, headers,
      ...(sdp && sdp.length > 0 ? { body: sdp, contentType: 'application/sdp' } : {}),
    });
  }
}
