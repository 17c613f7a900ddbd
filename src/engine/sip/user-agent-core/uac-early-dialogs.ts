/**
 * @module The early dialogs of one outgoing INVITE (RFC 3261 §12.1.2, §13.2.2.4): one per To tag
 * of the provisional responses (forks), PRACK for their reliable provisionals (RFC 3262 §4), and
 * their end when the final response arrives.
 */
import { Dialog } from '../dialogs/dialog.js';
import type { DialogAuth, DialogHost } from '../dialogs/dialog-host.js';
import { sendInDialog } from '../dialogs/in-dialog-request.js';
import { SessionDialog } from '../dialogs/session-dialog.js';
import type { SipRequest, SipResponse } from '../messages/sip-message.js';
import { lists100rel } from './reliable-provisionals.js';

/** What the early dialogs need of the UA: dialog services and the dialog table. */
export interface EarlyDialogHost extends DialogHost {
  /** Registers a dialog so in-dialog requests (UPDATE, INFO, BYE) from the far end find it. */
  addSession(session: SessionDialog): void;
}

/** How a provisional response was taken. */
export interface ProvisionalOutcome {
  /** The early dialog it belongs to; undefined for 100 and for 1xx without a To tag (§12.1). */
  session: SessionDialog | undefined;
  /** True when this response created the early dialog. */
  created: boolean;
  /**
   * RFC 3262 §4: a retransmitted or out-of-order reliable provisional response is neither
   * acknowledged nor processed further.
   */
  discard: boolean;
}

/** One early dialog and its reliable-provisional sequence number. */
interface EarlyDialog {
  session: SessionDialog;
  /**
   * RFC 3262 §4: the RSeq of the last in-order reliable provisional response. Each UAS numbers
   * its own, so forks (other To tags) have separate sequences.
   */
  lastRSeq: number | undefined;
}

/** Construction parameters of {@link UacEarlyDialogs}. */
export interface UacEarlyDialogsInit {
  host: EarlyDialogHost;
  auth: DialogAuth;
  /** The SDP offer of the INVITE, kept as the sessions' local description. */
  localSdp: Buffer | undefined;
}

/** The early dialogs of one INVITE client transaction, by remote (To) tag. */
export class UacEarlyDialogs {
  readonly #host: EarlyDialogHost;
  readonly #auth: DialogAuth;
  readonly #localSdp: Buffer | undefined;
  readonly #byTag = new Map<string, EarlyDialog>();
  /** The highest local CSeq any ended early dialog used (its PRACKs, UPDATEs, INFOs). */
  #endedSeq = 0;

  constructor(init: UacEarlyDialogsInit) {
    this.#host = init.host;
    this.#auth = init.auth;
    this.#localSdp = init.localSdp;
  }

  /** The live early dialogs, in the order they were created. */
  get sessions(): SessionDialog[] {
    return [...this.#byTag.values()].map((e) => e.session);
  }

  /**
   * The highest local CSeq used in any early dialog of this INVITE, live or ended. A dialog built
   * later from a 2xx with a known To tag must continue above it: the far end saw those requests in
   * the same dialog, and §12.2.2 makes it refuse a CSeq that does not increase.
   */
  get highestLocalSeq(): number {
    return Math.max(this.#endedSeq, ...[...this.#byTag.values()].map((e) => e.session.dialog.localSeq));
  }

  /**
   * A 1xx to `invite`. §12.1.2: a provisional response with a To tag creates an early dialog
   * (remote target from Contact, route set from Record-Route reversed, remote tag from To); later
   * ones with the same tag belong to it, one with another tag is another fork's dialog (§13.2.2.4).
   */
  receiveProvisional(invite: SipRequest, response: SipResponse): ProvisionalOutcome {
    const tag = response.to.tag;
    if (response.status <= 100 || !tag) return { session: undefined, created: false, discard: false };
    let early = this.#byTag.get(tag);
    const created = early === undefined;
    early ??= this.#create(invite, response, tag);
    // NOTE: not strictly RFC 3311 §5.1: SDP in an unreliable 18x is taken as the answer to our
    // INVITE offer too, as on the UAS side, so the far end may then send UPDATE offers.
    if (response.body.length > 0) {
      early.session.localOfferPending = false;
      early.session.remoteAnswer = response.body;
    }
    const discard = !this.#acknowledgeIfReliable(early, response);
    return { session: early.session, created, discard };
  }

  /**
   * The first 2xx of the INVITE. §13.2.2.4: when its To tag matches an early dialog, that dialog
   * is confirmed, with the route set and remote target recomputed from the 2xx; returns it, or
   * undefined when no early dialog matched (the caller builds a new one from the 2xx).
   *
   * NOTE: RFC 3261 §13.2.2.4 keeps the other early dialogs until 64*T1 after the first 2xx, in
   * case their fork answers too. They are ended at once here, because a late 2xx from another fork
   * is still ACKed and ended with BYE from the 2xx alone while the INVITE transaction absorbs
   * forked 2xx (RFC 6026 Accepted state), and nothing else may use a losing fork's dialog.
   */
  confirm(response: SipResponse, sessionExpires?: { deltaSeconds: number; refresher: 'uac' | 'uas' }): SessionDialog | undefined {
    const tag = response.to.tag ?? '';
    const winner = this.#byTag.get(tag);
    this.#byTag.delete(tag);
    this.end('other-fork-answered');
    if (!winner || winner.session.isEnded) return undefined;
    winner.session.dialog.confirmFromUac(response);
    winner.session.confirm(undefined, sessionExpires);
    return winner.session;
  }

  /**
   * Ends every early dialog without sending anything: a non-2xx final response, including the 487
   * after our CANCEL or its 64*T1 timeout (§12.3, §9.1), or another fork's 2xx (§13.2.2.4).
   */
  end(reason: 'request-failed' | 'other-fork-answered'): void {
    const all = [...this.#byTag.values()];
    this.#byTag.clear();
    for (const e of all) e.session.endEarly(reason);
  }

  #create(invite: SipRequest, response: SipResponse, tag: string): EarlyDialog {
    const session = new SessionDialog({
      dialog: Dialog.fromUac(invite, response), host: this.#host, role: 'uac',
      ...(this.#auth ? { auth: this.#auth } : {}), ...(this.#localSdp ? { localSdp: this.#localSdp } : {}),
    });
    session.localOfferPending = invite.body.length > 0;
    const early: EarlyDialog = { session, lastRSeq: undefined };
    this.#byTag.set(tag, early);
    // A BYE in the early dialog (ours, §15) ends it; a later 1xx with its tag must not revive it.
    session.events.on('terminated', () => {
      this.#endedSeq = Math.max(this.#endedSeq, session.dialog.localSeq);
      if (this.#byTag.get(tag) === early) this.#byTag.delete(tag);
    });
    this.#host.addSession(session);
    return early;
  }

  /**
   * RFC 3262 §4: a provisional response with `Require: 100rel` and an RSeq is acknowledged with a
   * PRACK sent in its early dialog (§7.2: RAck is the RSeq, then the CSeq number and method of the
   * response). The first one sets the dialog's sequence; afterwards only the next number (last + 1)
   * is taken: a retransmission (equal or lower) or a gap is dropped. Returns false when dropped.
   *
   * TODO(issue-3): a reliable provisional carrying an offer (our INVITE had none) needs the answer
   * in the PRACK (RFC 3262 §5); the PRACK is sent without one.
   */
  #acknowledgeIfReliable(early: EarlyDialog, response: SipResponse): boolean {
    if (!lists100rel(response, 'Require')) return true;
    const rseq = Number(response.headers.get('RSeq')?.trim());
    // §7.1: RSeq is 1 to 2**31-1; a reliable 1xx without a usable one cannot be acknowledged.
    if (!Number.isInteger(rseq) || rseq < 1 || rseq > 0x7fffffff) return true;
    if (early.lastRSeq !== undefined && rseq !== early.lastRSeq + 1) return false;
    early.lastRSeq = rseq;
    const rack = `${rseq} ${response.cseq.seq} ${response.cseq.method}`;
    void sendInDialog(early.session.dialog, this.#host, 'PRACK', { headers: [['RAck', rack]] }, this.#auth);
    return true;
  }
}
