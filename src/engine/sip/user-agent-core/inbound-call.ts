/**
 * @module The UAS handle of an incoming INVITE (RFC 3261 §13.3): progress with an early dialog
 * (reliably when the caller requires it, RFC 3262), accept, reject, and the caller ending the call
 * before answer by CANCEL or by BYE (§15).
 */
import { createResponse } from '../messages/response.js';
import type { SipRequest, SipResponse } from '../messages/sip-message.js';
import { Dialog } from '../dialogs/dialog.js';
import type { DialogHost } from '../dialogs/dialog-host.js';
import { SessionDialog } from '../dialogs/session-dialog.js';
import { formatSessionExpires, type SessionExpires } from '../dialogs/session-timer.js';
import type { InviteServerTransaction } from '../transactions/invite-server-transaction.js';
import { randomToken } from './user-agent-core.js';
import { TypedEvents } from './typed-events.js';
import { lists100rel, ReliableProvisionals } from './reliable-provisionals.js';
import type { SipSource } from './transport-port.js';

/** Events of an {@link InboundCall}. */
export type InboundCallEvents = {
  /**
   * The caller ended the call before a final response: a CANCEL (§9.2), or a BYE in the early
   * dialog (§15, answered 200); 487 was sent to the INVITE either way.
   */
  cancel: [request: SipRequest];
  /**
   * The INVITE was refused with `status` by the UA itself: the caller never acknowledged a
   * reliable provisional response (RFC 3262 §3, 64*T1 without PRACK).
   */
  failed: [status: number];
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
  /** The early dialog our first 18x created (§12.1.1, §13.3.1.1); it becomes the confirmed one on our 2xx. */
  #early: SessionDialog | undefined;
  /** RFC 3262: set when the INVITE requires 100rel; every provisional then goes reliably. */
  readonly #reliable: ReliableProvisionals | null;

  constructor(request: SipRequest, tx: InviteServerTransaction, source: SipSource, host: DialogHost, registrar: InboundCallRegistrar, sessionExpires: SessionExpires | undefined) {
    this.request = request;
    this.source = source;
    this.offer = request.body;
    this.#tx = tx;
    this.#host = host;
    this.#registrar = registrar;
    this.#sessionExpires = sessionExpires;
    this.#reliable = lists100rel(request, 'Require')
      ? new ReliableProvisionals(host.clock, host.timers, tx, request, () => this.#unacknowledged())
      : null;
  }

  /** Call-ID of the INVITE. */
  get callId(): string {
    return this.request.callId;
  }

  /** True once accepted, rejected or cancelled. */
  get isFinal(): boolean {
    return this.#final;
  }

  /** The early dialog (after a 18x) or the confirmed one (after accept); undefined before. */
  get session(): SessionDialog | undefined {
    return this.#early;
  }

  /**
   * Sends a provisional response (180 Ringing, 183 Session Progress with early media SDP). It
   * carries our To tag, so it creates an early dialog (§12.1.1), registered so that BYE, UPDATE
   * and INFO during ringing are matched instead of getting 481. Returns that early session: set
   * its `onOffer` for UPDATE (RFC 3311 §5.2) and listen to its `info` events.
   *
   * When the INVITE requires 100rel, the response goes reliably (RFC 3262 §3) and without `sdp`:
   * our 2xx could not be sent until a provisional carrying an answer was acknowledged, and the
   * 2xx carries the same answer, so early media is left out rather than the answer held up.
   */
  progress(status = 180, sdp?: Buffer): SessionDialog | undefined {
    if (this.#final || status <= 100 || status >= 200) return undefined;
    const early = this.#early ?? this.#createEarly();
    if (this.#reliable) {
      this.#reliable.send(this.#response(status));
      return early;
    }
    // NOTE: not strictly RFC 3311 §5.1: an answer in an unreliable 18x is treated as answering the
    // INVITE offer, so an UPDATE offer after early media SDP is accepted, as common peers expect.
    if (sdp && sdp.length > 0) early.initialOfferPending = false;
    this.#tx.respond(this.#response(status, sdp));
    return early;
  }

  #createEarly(): SessionDialog {
    const early = new SessionDialog({ dialog: Dialog.fromUas(this.request, this.#localTag, 'Early'), host: this.#host, role: 'uas' });
    early.initialOfferPending = this.offer.length > 0;
    // §15: the caller may end an early dialog with BYE; the session answered it 200 already.
    early.events.on('bye', (bye) => this.#endedBeforeAnswer(bye));
    // RFC 3262 §3: a PRACK matching the outstanding reliable provisional is answered 200, any other 481.
    if (this.#reliable) early.prackHandler = (prack) => this.#reliable?.prack(prack) ?? 481;
    this.#early = early;
    this.#registrar.addSession(early);
    return early;
  }

  /**
   * Sends 200 OK with the SDP answer, creates the confirmed dialog and retransmits the 2xx until
   * the ACK arrives (§13.3.1.4). Returns the session for in-dialog requests.
   */
  accept(sdp: Buffer): SessionDialog | undefined {
    if (this.#final) return undefined;
    this.#final = true;
    this.#registrar.callFinished(this.#tx);
    this.#reliable?.stop();
    const res = this.#response(200, sdp);
    if (this.#sessionExpires) {
      res.headers.append('Session-Expires', formatSessionExpires(this.#sessionExpires));
      // RFC 4028 §9: Require: timer only when the UAC is the refresher (it then supports timer).
      if (this.#sessionExpires.refresher === 'uac') res.headers.append('Require', 'timer');
    }
    const se = this.#sessionExpires?.refresher ? { deltaSeconds: this.#sessionExpires.deltaSeconds, refresher: this.#sessionExpires.refresher } : undefined;
    const session = this.#early ?? new SessionDialog({ dialog: Dialog.fromUas(this.request, this.#localTag, 'Early'), host: this.#host, role: 'uas' });
    session.confirm(sdp, se);
    this.#early = session;
    this.#registrar.addSession(session);
    this.#tx.respond(res);
    session.awaitAck(res, this.#tx);
    return session;
  }

  /** Sends a final failure (486 Busy Here, 603 Decline, 480...), with extra headers such as Retry-After (§20.33). */
  reject(status = 486, reason?: string, headers: readonly [string, string][] = []): void {
    if (this.#final || status < 300) return;
    this.#final = true;
    this.#registrar.callFinished(this.#tx);
    this.#reliable?.stop();
    this.#tx.respond(createResponse(this.request, status, reason, { toTag: this.#localTag, headers: [['Server', this.#host.userAgent], ...headers] }));
    this.#early?.endEarly();
  }

  /** Called by the UA when a CANCEL matched this INVITE: 487 to the INVITE (§9.2). @internal */
  cancelled(cancel: SipRequest): void {
    this.#endedBeforeAnswer(cancel);
  }

  /** §9.2 / §15: CANCEL, or BYE in the early dialog: 487 to the INVITE, the early dialog ends. */
  #endedBeforeAnswer(request: SipRequest): void {
    if (this.#final) return;
    this.#final = true;
    this.#registrar.callFinished(this.#tx);
    this.#reliable?.stop();
    this.#tx.respond(createResponse(this.request, 487, undefined, { toTag: this.#localTag }));
    // A BYE ends the early session itself (reason remote-bye); a CANCEL leaves it to us.
    if (request.method !== 'BYE') this.#early?.endEarly();
    this.events.emit('cancel', request);
  }

  /** RFC 3262 §3: no PRACK for 64*T1; the INVITE is refused with a 5xx and the early dialog ends. */
  #unacknowledged(): void {
    if (this.#final) return;
    this.reject(500, 'Provisional Response Not Acknowledged');
    this.events.emit('failed', 500);
  }

  #response(status: number, sdp?: Buffer): SipResponse {
    const headers: [string, string][] = [['Contact', this.#host.contact(this.source.protocol)], ['Server', this.#host.userAgent]];
    if (status === 200) headers.push(['Allow', 'INVITE, ACK, BYE, CANCEL, OPTIONS, INFO, UPDATE, REFER, NOTIFY, PRACK'], ['Supported', 'timer, 100rel']);
    return createResponse(this.request, status, undefined, {
      toTag: this.#localTag, headers,
      ...(sdp && sdp.length > 0 ? { body: sdp, contentType: 'application/sdp' } : {}),
    });
  }
}
