/**
 * @module The INVITE usage of a dialog (RFC 3261 §12-15): 2xx retransmission until the ACK, BYE,
 * INFO, OPTIONS, REFER with NOTIFY sipfrag (RFC 3515) and session timers (RFC 4028); re-INVITE and
 * UPDATE offers (§14, RFC 3311) are handled by session-modification.ts.
 */
import { createResponse } from '../messages/response.js';
import type { SipRequest, SipResponse } from '../messages/sip-message.js';
import type { InviteServerTransaction } from '../transactions/invite-server-transaction.js';
import type { NonInviteServerTransaction } from '../transactions/non-invite-server-transaction.js';
import { TypedEvents } from '../user-agent-core/typed-events.js';
import type { Dialog } from './dialog.js';
import type { DialogAuth, DialogHost } from './dialog-host.js';
import type { DialogSnapshot } from './dialog-snapshot.js';
import { sendInDialog, type InDialogOutcome } from './in-dialog-request.js';
import { ReferNotifier } from './refer-notifier.js';
import { SessionModification, type OfferHandler } from './session-modification.js';
import { SessionTimer } from './session-timer-runner.js';
import { retransmit2xxUntilAck, type Pending2xx } from './uas-2xx-retransmission.js';

export type { OfferHandler } from './session-modification.js';

/**
 * Why a session ended. 'request-failed': an early dialog ended by a non-2xx final response to the
 * INVITE, ours or theirs (RFC 3261 §12.3); 'other-fork-answered': a UAC early dialog dropped because
 * a 2xx with another To tag was taken (§13.2.2.4).
 */
export type SessionEndReason = 'local-bye' | 'remote-bye' | 'ack-timeout' | 'session-expired' | 'request-failed' | 'other-fork-answered';

/** Events of a {@link SessionDialog}. */
export type SessionEvents = {
  /** The far end sent BYE (already answered 200). */
  bye: [request: SipRequest];
  terminated: [reason: SessionEndReason];
  /** INFO received (already answered 200), e.g. DTMF relay. */
  info: [request: SipRequest];
  /** REFER received and accepted (202); report progress through the notifier (RFC 3515 §2.4.4). */
  refer: [referTo: string, notifier: ReferNotifier, request: SipRequest];
  /** NOTIFY received for a REFER we sent (already answered 200). */
  notify: [request: SipRequest];
  /** The ACK for our 2xx arrived (carries the answer when our 2xx held the offer). */
  ack: [request: SipRequest];
};

/** Construction parameters of a session dialog. */
export interface SessionDialogInit {
  dialog: Dialog;
  host: DialogHost;
  role: 'uac' | 'uas';
  auth?: DialogAuth;
  /** Negotiated session interval and who refreshes it (RFC 4028), if any. */
  sessionExpires?: { deltaSeconds: number; refresher: 'uac' | 'uas' };
  /** The SDP we sent in the initial offer/answer exchange. */
  localSdp?: Buffer;
}

/** A confirmed (or early) INVITE dialog and its in-dialog requests. */
export class SessionDialog {
  readonly dialog: Dialog;
  readonly role: 'uac' | 'uas';
  readonly events = new TypedEvents<SessionEvents>();
  /** Answers re-INVITE and UPDATE offers; without it they get 488. */
  onOffer: OfferHandler | undefined;
  /** UAS early dialog of an INVITE that required 100rel: the status a PRACK gets (RFC 3262 §3); without it, 481. */
  prackHandler: ((prack: SipRequest) => 200 | 481) | undefined;
  /**
   * Screens a REFER before it is accepted (RFC 3515 §2.4.2): a 4xx-6xx status refuses it with no
   * NOTIFY at all; null lets it through to the `refer` listener. Without it every REFER goes through.
   */
  referScreen: ((referTo: string, request: SipRequest) => number | null | Promise<number | null>) | undefined;
  /**
   * Our current session description (the last offer or answer we sent), re-sent unchanged by
   * session refreshes (RFC 4028 §7.1: a refresh re-INVITE carries the same SDP).
   */
  localSdp: Buffer | undefined;
  /**
   * UAC: the far end's answer to our INVITE's offer, from the 2xx or, when the 2xx carries none,
   * from the 18x of this dialog that did. A reliable 183 may complete the exchange, and the 2xx
   * then has no SDP (RFC 3262 §5, RFC 6337 §3.1); a 2xx with SDP is the answer that counts.
   */
  remoteAnswer: Buffer | undefined;
  readonly #host: DialogHost;
  readonly #auth: DialogAuth;
  #ended = false;
  /** The ACK we sent for the initial 2xx, resent on 2xx retransmissions (UAC, §13.2.2.4). */
  #ack: SipRequest | undefined;
  /** UAS: 2xx retransmission until the ACK (§13.3.1.4). */
  #awaitingAck: Pending2xx | undefined;
  readonly #sessionTimer: SessionTimer;
  readonly #modification: SessionModification;

  constructor(init: SessionDialogInit) {
    this.dialog = init.dialog;
    this.localSdp = init.localSdp;
    this.role = init.role;
    this.#host = init.host;
    this.#auth = init.auth;
    this.#sessionTimer = new SessionTimer(init.host.clock, init.role, {
      refresh: () => void this.reinvite(this.localSdp),
      expire: () => void this.#endWithBye('session-expired'),
    });
    if (init.sessionExpires) this.#sessionTimer.arm(init.sessionExpires);
    this.#modification = new SessionModification({ session: this, host: init.host, auth: init.auth, sessionTimer: this.#sessionTimer });
  }

  /**
   * UAS early dialog: the INVITE carried an offer that no provisional answered yet, so an UPDATE
   * offer gets 500 with Retry-After (RFC 3311 §5.2). Cleared once a provisional carried SDP.
   */
  get initialOfferPending(): boolean {
    return this.#modification.initialOfferPending;
  }

  set initialOfferPending(pending: boolean) {
    this.#modification.initialOfferPending = pending;
  }

  /** UAC early dialog: our INVITE's offer has no answer yet; an UPDATE offer gets 491 (RFC 3311 §5.2). */
  get localOfferPending(): boolean {
    return this.#modification.localOfferPending;
  }

  set localOfferPending(pending: boolean) {
    this.#modification.localOfferPending = pending;
  }

  get id(): string {
    return this.dialog.id;
  }

  get isEnded(): boolean {
    return this.#ended;
  }

  /**
   * The 2xx (ours as UAS, theirs as UAC) turns the early dialog into the confirmed one (RFC 3261
   * §12.1.1, §13.2.2.4, §13.3.1.4), keeping its identifiers and CSeq state; the session timer
   * starts now (RFC 4028 §8, §9). `localSdp` replaces ours when given.
   */
  confirm(localSdp: Buffer | undefined, sessionExpires?: { deltaSeconds: number; refresher: 'uac' | 'uas' }): void {
    this.dialog.handle('2xx');
    if (localSdp) this.localSdp = localSdp;
    this.initialOfferPending = false;
    this.localOfferPending = false;
    if (sessionExpires) this.#sessionTimer.arm(sessionExpires);
  }

  /**
   * Ends the early dialog: a non-2xx final response to the INVITE (RFC 3261 §12.3), or, for a UAC,
   * a 2xx from another fork (§13.2.2.4). No request is sent.
   */
  endEarly(reason: 'request-failed' | 'other-fork-answered' = 'request-failed'): void {
    if (this.#ended || this.dialog.state !== 'Early') return;
    this.dialog.handle(reason === 'request-failed' ? '300-699' : 'other-fork-2xx');
    this.#end(reason);
  }

  /** UAC: sends (and keeps) the ACK for the 2xx of the initial INVITE (§13.2.2.4). */
  sendAck(inviteCseq: number, body?: Buffer): void {
    const ack = this.dialog.createRequest('ACK', inviteCseq);
    if (body && body.length > 0) {
      ack.body = body;
      ack.headers.append('Content-Type', 'application/sdp');
    }
    ack.headers.set('Content-Length', String(ack.body.length));
    const target = this.#host.targetFor(this.dialog.nextHopUri());
    this.#host.sendStateless(ack, target);
    this.#ack = ack;
  }

  /** UAC: a 2xx retransmission (or one after the transaction ended) gets the same ACK again. */
  receiveStray2xx(_response: SipResponse): void {
    if (!this.#ack) return;
    const target = this.#host.targetFor(this.dialog.nextHopUri());
    this.#host.sendStateless(this.#ack, target);
  }

  /**
   * UAS: after sending a 2xx to an INVITE, retransmit it at T1 doubling to T2 until the ACK, and
   * give up after 64*T1 with a BYE (§13.3.1.4).
   */
  awaitAck(response: SipResponse, tx: InviteServerTransaction): void {
    this.#awaitingAck?.cancel();
    this.#awaitingAck = retransmit2xxUntilAck(this.#host.clock, this.#host.timers, response, tx, () => {
      this.#awaitingAck = undefined;
      this.dialog.handle('ack-timeout');
      void this.#endWithBye('ack-timeout');
    });
  }

  /** An ACK for one of our 2xx (§13.3.1.4 stops the retransmissions). */
  receiveAck(ack: SipRequest): void {
    if (this.#awaitingAck && ack.cseq.seq === this.#awaitingAck.cseq) {
      this.#awaitingAck.cancel();
      this.#awaitingAck = undefined;
      this.#modification.inviteAcked();
      this.events.emit('ack', ack);
    }
  }

  /** A request inside this dialog, with its server transaction. */
  receiveRequest(request: SipRequest, tx: InviteServerTransaction | NonInviteServerTransaction): void {
    const respond = (status: number, opts: Parameters<typeof createResponse>[3] = {}): SipResponse => {
      const res = createResponse(request, status, undefined, opts);
      tx.respond(res);
      return res;
    };
    // §12.2.2: a lower CSeq than the last one is out of order.
    if (!this.dialog.acceptRemoteCSeq(request)) {
      respond(500, { headers: [['Retry-After', '1']] });
      return;
    }
    switch (request.method) {
      case 'BYE':
        // §15.1.2: the BYE ended the session the moment it was answered. The dialog is gone before
        // anyone hears of it, so a listener that ends the call (a B2BUA ending both legs) finds it
        // ended and BYEs only the other leg, never this one again (docs/DECISIONS.md).
        respond(200);
        this.#close();
        this.events.emit('bye', request);
        this.events.emit('terminated', 'remote-bye');
        return;
      case 'INVITE':
      case 'UPDATE':
        void this.#modification.receiveOffer(request, tx, respond);
        return;
      case 'INFO':
        respond(200);
        this.events.emit('info', request);
        return;
      case 'OPTIONS':
        tx.respond(this.#host.optionsResponse(request));
        return;
      case 'REFER':
        this.#receiveRefer(request, respond);
        return;
      case 'NOTIFY':
        respond(200);
        this.events.emit('notify', request);
        return;
      case 'PRACK':
        // RFC 3262 §3: a PRACK must match an unacknowledged reliable provisional response; only
        // the UAS of an INVITE that required 100rel sends those, and it decides. Otherwise none can.
        respond(this.prackHandler?.(request) ?? 481);
        return;
      default:
        respond(405, { headers: [['Allow', 'INVITE, ACK, BYE, CANCEL, OPTIONS, INFO, UPDATE, REFER, NOTIFY, PRACK']] });
    }
  }

  #receiveRefer(request: SipRequest, respond: (s: number) => SipResponse): void {
    const referTo = request.headers.get('Refer-To');
    // RFC 3515 §2.4.1: exactly one Refer-To, else 400.
    if (referTo === undefined || request.headers.count('Refer-To') !== 1) return void respond(400);
    // Accepting (202) promises NOTIFYs on the outcome; with nobody to follow the REFER on this
    // session that would be a promise never kept, so it is declined (§2.4.2 allows any 4xx-6xx).
    if (!this.events.has('refer')) return void respond(603);
    const target = referTo.replace(/^\s*<|>\s*$/g, '');
    // The screen may read stored policy: the REFER's server transaction absorbs retransmissions
    // until it is answered (RFC 3261 §17.2.2), so the answer may wait for it.
    void Promise.resolve(this.referScreen?.(target, request) ?? null).then(
      (refused) => this.#answerRefer(target, request, refused, respond),
      () => respond(500),
    );
  }

  #answerRefer(target: string, request: SipRequest, refused: number | null, respond: (s: number) => SipResponse): void {
    // The session may have ended while the screen read its policy (§12.2.2: no dialog, 481).
    if (this.#ended) return void respond(481);
    if (refused !== null) return void respond(refused);
    respond(202);
    const notifier = new ReferNotifier((body, terminated) => this.#sendNotify(body, terminated), request.cseq.seq);
    void notifier.notify(100, 'Trying');
    this.events.emit('refer', target, notifier, request);
  }

  async #sendNotify(sipfrag: string, terminated: boolean): Promise<void> {
    if (this.#ended) return;
    await sendInDialog(this.dialog, this.#host, 'NOTIFY', {
      headers: [['Event', 'refer'], ['Subscription-State', terminated ? 'terminated;reason=noresource' : 'active;expires=60']],
      body: Buffer.from(sipfrag), contentType: 'message/sipfrag;version=2.0',
    }, this.#auth);
  }

  /**
   * The dialog's state for another process to end it with BYE (dialog-snapshot.ts), with the
   * transport its next hop is reached over now.
   */
  snapshot(): DialogSnapshot {
    return this.dialog.snapshot(this.#host.targetFor(this.dialog.nextHopUri()).protocol);
  }

  /** Sends BYE and ends the session (§15.1.1). Resolves with the BYE's final status. */
  async bye(): Promise<number> {
    return this.#endWithBye('local-bye');
  }

  async #endWithBye(reason: SessionEndReason): Promise<number> {
    if (this.#ended) return 0;
    const p = sendInDialog(this.dialog, this.#host, 'BYE', {}, this.#auth);
    this.#end(reason);
    return (await p).outcome.status;
  }

  /**
   * Sends a re-INVITE with `sdp` as the offer (hold, resume, or `localSdp` for a refresh). A 491
   * is retried after the §14.1 back-off. Resolves with the final response (or local 408/503); the
   * SDP answer is in the response body.
   */
  reinvite(sdp: Buffer | undefined): Promise<InDialogOutcome> {
    return this.#modification.reinvite(sdp);
  }

  /**
   * Sends UPDATE (RFC 3311) with `sdp` as the offer, or without a body as a session refresh
   * (RFC 4028 §7.1). Resolves with the final response.
   */
  update(sdp?: Buffer): Promise<InDialogOutcome> {
    return this.#modification.update(sdp);
  }

  /** Sends INFO (for example application/dtmf-relay) and resolves with the final status. */
  async info(body: Buffer, contentType: string): Promise<number> {
    return (await sendInDialog(this.dialog, this.#host, 'INFO', { body, contentType }, this.#auth)).outcome.status;
  }

  /** Sends REFER to `target` (RFC 3515); progress comes back as `notify` events. Resolves with the REFER's status. */
  async refer(target: string, referredBy?: string): Promise<number> {
    const headers: [string, string][] = [['Refer-To', `<${target}>`]];
    if (referredBy) headers.push(['Referred-By', `<${referredBy}>`]);
    return (await sendInDialog(this.dialog, this.#host, 'REFER', { headers }, this.#auth)).outcome.status;
  }

  #end(reason: SessionEndReason): void {
    if (this.#ended) return;
    this.#close();
    this.events.emit('terminated', reason);
  }

  /** Marks the session ended and forgets the dialog, without telling anyone yet. */
  #close(): void {
    this.#ended = true;
    this.#awaitingAck?.cancel();
    this.#awaitingAck = undefined;
    this.#sessionTimer.stop();
    if (this.dialog.state !== 'Terminated') this.dialog.transition('Terminated');
    this.#host.removeDialog(this.dialog.id);
  }
}
