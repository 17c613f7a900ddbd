/**
 * @module The UAC side of an INVITE (RFC 3261 §13.2): provisional responses and the early dialogs
 * they create (uac-early-dialogs.ts), the 2xx and its ACK, failures, digest retries (§22.2), 422
 * retries (RFC 4028) and CANCEL (§9.1).
 */
import { SipHeaders, SipRequest, type SipResponse } from '../messages/sip-message.js';
import { DigestClient, type DigestCredentials } from '../auth/digest-client.js';
import { Dialog } from '../dialogs/dialog.js';
import { SessionDialog } from '../dialogs/session-dialog.js';
import { parseSessionExpires, retryAfter422 } from '../dialogs/session-timer.js';
import { UacEarlyDialogs, type EarlyDialogHost } from './uac-early-dialogs.js';
import { isFinalOutboundCallState as isFinal, nextOutboundCallState, type OutboundCallEvent, type OutboundCallState } from './outbound-call-state.js';
import { randomToken } from './user-agent-core.js';
import { TypedEvents } from './typed-events.js';
import type { SipTarget } from './transport-port.js';

/** What to call and how. */
export interface InviteOptions {
  /** Request-URI, e.g. `sip:+15551234@carrier.example`. */
  target: string;
  /** Our identity for From, e.g. `sip:+15550000@gw.example` (a name-addr is accepted). */
  from: string;
  /** To; defaults to the target. */
  to?: string;
  /** The SDP offer. */
  sdp?: Buffer;
  /** Where to send (outbound proxy or carrier address); defaults to the target's host. */
  proxy?: string;
  /** Extra headers (X-..., P-Asserted-Identity). */
  headers?: readonly (readonly [string, string])[];
  credentials?: DigestCredentials;
  /** RFC 4028 session interval to ask for (seconds); none when absent. */
  sessionExpires?: number;
}

/** Events of an {@link OutboundCall}. */
export type OutboundCallEvents = {
  /**
   * A 1xx with a To tag created an early dialog (RFC 3261 §12.1.2); forks give one each. Emitted
   * before that response's `progress`. The session takes UPDATE and INFO both ways (RFC 3311), and
   * a 2xx with its tag makes it the `accepted` session.
   */
  early: [session: SessionDialog, response: SipResponse];
  /** A 1xx (180 Ringing, 183 with early media SDP in `response.body`). */
  progress: [response: SipResponse];
  /** The 2xx: the session is established and ACKed. */
  accepted: [session: SessionDialog, response: SipResponse];
  /** A final failure, a timeout (408) or a transport error (503); 487 after {@link OutboundCall.cancel}. */
  failed: [status: number, reason: string, response: SipResponse | undefined];
};

/** Hooks the UA lends to outbound calls. */
export interface OutboundCallHost extends EarlyDialogHost {
  /** `onFailure` gets 408 for a timeout, 503 for a transport error (RFC 3261 8.1.3.1), with what failed. */
  sendInvite(request: SipRequest, target: SipTarget, onResponse: (r: SipResponse) => void, onFailure: (status: 408 | 503, detail?: string) => void): string;
  sendCancel(cancel: SipRequest, target: SipTarget, branch: string): void;
}

/** One outgoing INVITE and its outcome. */
export class OutboundCall {
  readonly events = new TypedEvents<OutboundCallEvents>();
  readonly callId = `${randomToken(12)}`;
  readonly #o: InviteOptions;
  readonly #host: OutboundCallHost;
  readonly #fromTag = randomToken();
  readonly #auth: DigestClient | undefined;
  readonly #target: SipTarget;
  #cseq = 1;
  #request: SipRequest | undefined;
  #branch = '';
  #state: OutboundCallState = 'Calling';
  #sessionExpires: number | undefined;
  readonly #early: UacEarlyDialogs;
  #session: SessionDialog | undefined;

  constructor(options: InviteOptions, host: OutboundCallHost) {
    this.#o = options;
    this.#host = host;
    this.#auth = options.credentials ? new DigestClient(options.credentials) : undefined;
    this.#target = host.targetFor(options.proxy ?? options.target);
    this.#sessionExpires = options.sessionExpires;
    this.#early = new UacEarlyDialogs({ host, auth: this.#auth, localSdp: options.sdp });
  }

  /** The early dialogs still alive (one per answering fork), in the order they were created. */
  get earlySessions(): readonly SessionDialog[] {
    return this.#early.sessions;
  }

  /** Sends the INVITE. */
  start(): void {
    this.#send();
  }

  /** §9.1: CANCEL once a provisional response arrived (deferred until then); no effect after a final. */
  cancel(): void {
    if (this.#transition('cancel') === 'Proceeding') this.#sendCancel();
  }

  /** The one method that changes state (outbound-call-state.ts has the diagram); returns the state it left. */
  #transition(event: OutboundCallEvent): OutboundCallState {
    const from = this.#state;
    this.#state = nextOutboundCallState(from, event);
    return from;
  }

  #send(): void {
    const failed = (status: 408 | 503, detail?: string): void => {
      // The reason of a failure without a response is ours to write: the transport's own words say why.
      this.#fail(status, detail ?? (status === 408 ? 'Request Timeout' : 'Service Unavailable'), undefined);
    };
    let req: SipRequest;
    try {
      // Contact and Via name our listening point for the target's transport; with none (TLS
      // without a certificate configured) the INVITE cannot be written: a transport error (8.1.3.1).
      req = this.#buildInvite();
    } catch (err) {
      failed(503, err instanceof Error ? err.message : String(err));
      return;
    }
    this.#request = req;
    this.#branch = this.#host.sendInvite(req, this.#target, (r) => this.#onResponse(r), failed);
  }

  #buildInvite(): SipRequest {
    const o = this.#o;
    const h = new SipHeaders();
    if (o.proxy) h.append('Route', `<${o.proxy.replace(/;lr$/, '')};lr>`);
    h.append('Max-Forwards', '70');
    h.append('From', `${asNameAddr(o.from)};tag=${this.#fromTag}`);
    h.append('To', asNameAddr(o.to ?? o.target));
    h.append('Call-ID', this.callId);
    h.append('CSeq', `${this.#cseq} INVITE`);
    h.append('Contact', this.#host.contact(this.#target.protocol));
    h.append('Allow', 'INVITE, ACK, BYE, CANCEL, OPTIONS, INFO, UPDATE, REFER, NOTIFY, PRACK');
    h.append('Supported', '100rel, timer, replaces');
    if (this.#sessionExpires) {
      h.append('Session-Expires', String(this.#sessionExpires));
      h.append('Min-SE', '90');
    }
    for (const [k, v] of o.headers ?? []) h.append(k, v);
    const req = new SipRequest('INVITE', o.target, h, o.sdp ?? Buffer.alloc(0));
    if (req.body.length > 0) h.append('Content-Type', 'application/sdp');
    const creds = this.#auth?.hasChallenge ? this.#auth.authorize('INVITE', o.target) : undefined;
    if (creds) h.append(creds.name, creds.value);
    return req;
  }

  #onResponse(res: SipResponse): void {
    const req = this.#request;
    if (!req || res.cseq.seq !== this.#cseq) return;
    if (res.status < 200) return this.#onProvisional(req, res);
    if (res.status < 300) return this.#onSuccess(req, res);
    if (isFinal(this.#state)) return;
    // §12.3: a non-2xx final response ends every early dialog of the request, retried or not.
    this.#early.end('request-failed');
    if ((res.status === 401 || res.status === 407) && this.#auth && this.#state !== 'CancelPending') {
      const challenges = res.headers.getAll(res.status === 401 ? 'WWW-Authenticate' : 'Proxy-Authenticate');
      if (this.#auth.handleChallenge(res.status, challenges)) return this.#retry();
    }
    if (res.status === 422 && this.#sessionExpires) {
      const se = retryAfter422(this.#sessionExpires, res.headers.get('Min-SE'));
      if (se !== undefined) {
        this.#sessionExpires = se;
        return this.#retry();
      }
    }
    this.#fail(res.status, res.reason, res);
  }

  /**
   * §22.2, RFC 4028 §7.4: the same call again with a new CSeq and branch, above any CSeq the early
   * dialogs of the previous attempt used.
   */
  #retry(): void {
    this.#transition('retry');
    this.#cseq = Math.max(this.#cseq, this.#early.highestLocalSeq) + 1;
    this.#send();
  }

  #onProvisional(req: SipRequest, res: SipResponse): void {
    if (isFinal(this.#state)) return;
    // §9.1: any provisional response, 100 Trying included, allows the CANCEL. Waiting for a 18x
    // would leave a call the far end only answered with 100 uncancellable: the transaction is in
    // Proceeding, where no timer ends it (§17.1.1.2). A CANCEL asked for before it goes now.
    if (this.#transition('provisional') === 'CancelPending') this.#sendCancel();
    const { session, created, discard } = this.#early.receiveProvisional(req, res);
    if (discard) return;
    if (session && created) this.events.emit('early', session, res);
    if (res.status > 100) this.events.emit('progress', res);
  }

  #onSuccess(req: SipRequest, res: SipResponse): void {
    if (this.#session && res.to.tag === this.#session.dialog.remoteTag) {
      this.#session.receiveStray2xx(res);
      return;
    }
    const se = parseSessionExpires(res.headers.get('Session-Expires'));
    const sessionExpires = se ? { deltaSeconds: se.deltaSeconds, refresher: se.refresher ?? 'uac' } : undefined;
    // §13.2.2.4: the first 2xx confirms the early dialog with its To tag (the others end); a 2xx
    // matching none, or a later one from another fork, makes a new dialog.
    const settled = isFinal(this.#state);
    const session = (settled ? undefined : this.#early.confirm(res, sessionExpires)) ?? this.#newSession(req, res, sessionExpires);
    if (res.body.length > 0) session.remoteAnswer = res.body;
    this.#host.addSession(session);
    session.sendAck(req.cseq.seq);
    const from = this.#transition('2xx');
    if (settled) {
      // §13.2.2.4: a second 2xx from another fork: ACK it, then BYE (one call only).
      void session.bye();
      return;
    }
    this.#session = session;
    if (from === 'CancelPending' || from === 'Cancelling') {
      // §9.1: the CANCEL lost the race with the 2xx: the call is ACKed and ended with BYE.
      void session.bye();
      return;
    }
    this.events.emit('accepted', session, res);
  }

  /** A dialog built from a 2xx alone; its CSeq continues above the early dialogs' (§12.2.1.1). */
  #newSession(req: SipRequest, res: SipResponse, sessionExpires: { deltaSeconds: number; refresher: 'uac' | 'uas' } | undefined): SessionDialog {
    const dialog = Dialog.fromUac(req, res);
    dialog.localSeq = Math.max(dialog.localSeq, this.#early.highestLocalSeq);
    return new SessionDialog({
      dialog, host: this.#host, role: 'uac', ...(this.#auth ? { auth: this.#auth } : {}), ...(this.#o.sdp ? { localSdp: this.#o.sdp } : {}),
      ...(sessionExpires ? { sessionExpires } : {}),
    });
  }

  #fail(status: number, reason: string, res: SipResponse | undefined): void {
    if (isFinal(this.#transition('failure'))) return;
    this.#early.end('request-failed');
    this.events.emit('failed', status, reason, res);
  }

  /** §9.1: CANCEL copies Request-URI, Call-ID, To, From, the CSeq number and Route of the INVITE. */
  #sendCancel(): void {
    const inv = this.#request;
    if (!inv) return;
    const h = new SipHeaders();
    for (const r of inv.headers.getAllFields('Route')) h.append('Route', r);
    h.append('Max-Forwards', '70');
    h.append('From', inv.headers.get('From') ?? '');
    h.append('To', inv.headers.get('To') ?? '');
    h.append('Call-ID', inv.callId);
    h.append('CSeq', `${inv.cseq.seq} CANCEL`);
    this.#host.sendCancel(new SipRequest('CANCEL', inv.uri, h), this.#target, this.#branch);
    // §9.1: with no final response 64*T1 after the CANCEL, the INVITE is considered cancelled (a
    // far end that lost the CANCEL or never answers must not keep the call ringing for good).
    const timer = this.#host.clock.setTimeout(() => this.#fail(487, 'Request Terminated', undefined), 64 * this.#host.timers.T1);
    this.events.on('accepted', () => timer.cancel());
    this.events.on('failed', () => timer.cancel());
  }
}

function asNameAddr(uriOrNameAddr: string): string {
  return uriOrNameAddr.includes('<') ? uriOrNameAddr : `<${uriOrNameAddr}>`;
}
