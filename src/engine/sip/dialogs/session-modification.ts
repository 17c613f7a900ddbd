/**
 * @module Modifying an existing session (RFC 3261 §14, RFC 3311): re-INVITE and UPDATE offers in
 * both directions, the outstanding-offer rules that decide 491 and 500 (§14.1, §14.2, RFC 3311
 * §5.2), and the session-timer headers such requests carry (RFC 4028).
 */
import type { createResponse } from '../messages/response.js';
import type { SipRequest, SipResponse } from '../messages/sip-message.js';
import type { InviteServerTransaction } from '../transactions/invite-server-transaction.js';
import type { NonInviteServerTransaction } from '../transactions/non-invite-server-transaction.js';
import type { Dialog } from './dialog.js';
import type { DialogAuth, DialogHost } from './dialog-host.js';
import { glareBackoffMs } from './glare.js';
import { sendInDialog, type InDialogOutcome } from './in-dialog-request.js';
import type { SessionTimer } from './session-timer-runner.js';

/** Answers the far end's offer (hold, resume, codec change): returns the SDP answer, or undefined for 488. */
export type OfferHandler = (offer: Buffer, request: SipRequest) => Buffer | undefined | Promise<Buffer | undefined>;

/** Responds on the request's server transaction and returns the response sent. */
export type Respond = (status: number, opts?: Parameters<typeof createResponse>[3]) => SipResponse;

/** What the modification needs of its session dialog (the INVITE usage owns the ACK exchange). */
export interface ModifiedSession {
  readonly dialog: Dialog;
  readonly role: 'uac' | 'uas';
  readonly isEnded: boolean;
  /** Our current session description, replaced by every offer or answer we send. */
  localSdp: Buffer | undefined;
  readonly onOffer: OfferHandler | undefined;
  /** UAC: the ACK for a 2xx to our (re-)INVITE (§13.2.2.4). */
  sendAck(inviteCseq: number): void;
  /** UAS: retransmit our 2xx to a (re-)INVITE until its ACK (§13.3.1.4). */
  awaitAck(response: SipResponse, tx: InviteServerTransaction): void;
}

/** Dependencies of a {@link SessionModification}. */
export interface SessionModificationInit {
  session: ModifiedSession;
  host: DialogHost;
  auth: DialogAuth;
  sessionTimer: SessionTimer;
}

/** The re-INVITE and UPDATE exchanges of one session dialog. */
export class SessionModification {
  readonly #session: ModifiedSession;
  readonly #host: DialogHost;
  readonly #auth: DialogAuth;
  readonly #sessionTimer: SessionTimer;
  #outgoingInvite = false;
  #incomingInvite = false;
  /** RFC 3311 §5.2: an UPDATE offer of ours waiting for its answer, or one of theirs we are answering. */
  #outgoingUpdate = false;
  #incomingUpdate = false;
  /**
   * UAS early dialog: the INVITE carried an offer that no provisional answered yet, so an UPDATE
   * offer gets 500 with Retry-After (RFC 3311 §5.2). Cleared once a provisional carried SDP.
   */
  initialOfferPending = false;
  /**
   * UAC early dialog: the offer in our INVITE has no answer yet, so an UPDATE offer from the far
   * end gets 491 (RFC 3311 §5.2). Cleared once a provisional or the 2xx carried SDP.
   */
  localOfferPending = false;

  constructor(init: SessionModificationInit) {
    this.#session = init.session;
    this.#host = init.host;
    this.#auth = init.auth;
    this.#sessionTimer = init.sessionTimer;
  }

  /** The ACK for the 2xx to their (re-)INVITE arrived: their INVITE is no longer pending (§14.2). */
  inviteAcked(): void {
    this.#incomingInvite = false;
  }

  /** A re-INVITE or UPDATE from the far end; the answer comes from the session's `onOffer`. */
  async receiveOffer(request: SipRequest, tx: InviteServerTransaction | NonInviteServerTransaction, respond: Respond): Promise<void> {
    // §14.2: an INVITE while ours is pending gets 491; one while theirs is pending gets 500 + Retry-After.
    if (request.method === 'INVITE' && this.#outgoingInvite) return void respond(491);
    if (request.method === 'INVITE' && this.#incomingInvite) return void respond(500, { headers: [['Retry-After', String(Math.ceil(Math.random() * 10))]] });
    const updateOffer = request.method === 'UPDATE' && request.body.length > 0;
    if (request.method === 'UPDATE' && !updateOffer) {
      // RFC 3311 5.2: an UPDATE without an offer refreshes the target and, with RFC 4028, the
      // session. Its 2xx carries neither offer nor answer, so the application is not asked.
      this.#session.dialog.refreshTarget(request.headers);
      return void respond(200, { headers: this.#okHeaders(request) });
    }
    if (updateOffer) {
      // RFC 3311 §5.2: our own offer outstanding gets 491; theirs unanswered gets 500 + Retry-After.
      if (this.#outgoingUpdate || this.#outgoingInvite || this.localOfferPending) return void respond(491);
      if (this.#incomingUpdate || this.#incomingInvite || this.initialOfferPending) {
        return void respond(500, { headers: [['Retry-After', String(Math.ceil(Math.random() * 10))]] });
      }
      this.#incomingUpdate = true;
    }
    if (request.method === 'INVITE') this.#incomingInvite = true;
    const session = this.#session;
    session.dialog.refreshTarget(request.headers);
    let answer: Buffer | undefined;
    try {
      answer = session.onOffer ? await session.onOffer(request.body, request) : undefined;
    } catch {
      answer = undefined;
    }
    if (updateOffer) this.#incomingUpdate = false;
    if (answer === undefined) {
      this.#incomingInvite = false;
      return void respond(488);
    }
    session.localSdp = answer;
    const res = respond(200, { headers: this.#okHeaders(request), body: answer, contentType: 'application/sdp' });
    if (request.method === 'INVITE') session.awaitAck(res, tx as InviteServerTransaction);
  }

  /** Contact, Server and the RFC 4028 headers of our 2xx to a target or session refresh. */
  #okHeaders(request: SipRequest): [string, string][] {
    const protocol = this.#host.targetFor(this.#session.dialog.nextHopUri()).protocol;
    const se = this.#sessionTimer.onRefreshRequest(request);
    const headers: [string, string][] = [['Contact', this.#host.contact(protocol)], ['Server', this.#host.userAgent]];
    if (se) headers.push(['Session-Expires', se], ...(se.includes('refresher=uac') ? [['Require', 'timer'] as [string, string]] : []));
    return headers;
  }

  /** Sends a re-INVITE with `sdp` as the offer; a 491 is retried after the §14.1 back-off. */
  async reinvite(sdp: Buffer | undefined): Promise<InDialogOutcome> {
    const session = this.#session;
    if (sdp) session.localSdp = sdp;
    for (let attempt = 0; attempt < 3; attempt++) {
      this.#outgoingInvite = true;
      const headers: [string, string][] = this.#sessionTimer.refreshHeaders();
      const { request, outcome } = await sendInDialog(session.dialog, this.#host, 'INVITE', { headers, ...(sdp ? { body: sdp } : {}) }, this.#auth);
      this.#outgoingInvite = false;
      if ('headers' in outcome && outcome.status >= 200 && outcome.status < 300) {
        session.dialog.refreshTarget(outcome.headers);
        session.sendAck(request.cseq.seq);
        this.#sessionTimer.onRefreshResponse(outcome);
      }
      if (outcome.status !== 491) return outcome;
      await new Promise<void>((r) => this.#host.clock.setTimeout(r, glareBackoffMs(session.role === 'uac')));
      if (session.isEnded) return outcome;
    }
    return { status: 408, reason: 'Request Timeout' };
  }

  /** Sends UPDATE (RFC 3311) with `sdp` as the offer, or without a body as a refresh (RFC 4028 §7.1). */
  async update(sdp?: Buffer): Promise<InDialogOutcome> {
    const session = this.#session;
    if (sdp) session.localSdp = sdp;
    const headers = this.#sessionTimer.refreshHeaders();
    if (sdp) this.#outgoingUpdate = true;
    const { outcome } = await sendInDialog(session.dialog, this.#host, 'UPDATE', { headers, ...(sdp ? { body: sdp } : {}) }, this.#auth);
    this.#outgoingUpdate = false;
    if ('headers' in outcome && outcome.status >= 200 && outcome.status < 300) {
      session.dialog.refreshTarget(outcome.headers);
      this.#sessionTimer.onRefreshResponse(outcome);
    }
    return outcome;
  }
}
