/** @module A SIP dialog (RFC 3261 §12): identifiers, route set, remote target and CSeq rules. */
import { formatNameAddr, parseNameAddr } from '../grammar/name-addr.js';
import { parseUri } from '../grammar/uri.js';
import { SipHeaders, SipRequest, type SipResponse } from '../messages/sip-message.js';
import { assertEdge } from '../transactions/transaction-state.js';
import type { SipProtocol } from '../user-agent-core/transport-port.js';
import { snapshotCSeq, type DialogSnapshot } from './dialog-snapshot.js';
import { DIALOG_EDGES, nextDialogState, type DialogEvent, type DialogState } from './dialog-state.js';

/** The dialog id of §12: Call-ID, local tag, remote tag. */
export function dialogId(callId: string, localTag: string, remoteTag: string): string {
  return `${callId}|${localTag}|${remoteTag}`;
}

/** Strips `;tag=` from a From/To value so the dialog can add its own tag. */
function withoutTag(value: string): string {
  const a = parseNameAddr(value);
  a.params.delete('tag');
  delete a.tag;
  return formatNameAddr(a);
}

/** Contact URI of a message, without angle brackets; undefined when absent. */
function contactUri(headers: SipHeaders): string | undefined {
  const c = headers.getAll('Contact')[0];
  if (c === undefined) return undefined;
  const m = /<([^>]*)>/.exec(c);
  return (m?.[1] ?? c.split(';')[0] ?? '').trim();
}

/** Fields from which a dialog is built. */
interface DialogInit {
  callId: string;
  localTag: string;
  remoteTag: string;
  localUri: string;
  remoteUri: string;
  remoteTarget: string;
  routeSet: string[];
  localSeq: number;
  remoteSeq: number | undefined;
  state: DialogState;
}

/** One dialog. Session behaviour (INVITE usage) lives in session-dialog.ts. */
export class Dialog {
  readonly callId: string;
  readonly localTag: string;
  readonly remoteTag: string;
  /** From (ours) and To (theirs) values without tags, as the dialog sends them. */
  readonly localUri: string;
  readonly remoteUri: string;
  remoteTarget: string;
  routeSet: string[];
  localSeq: number;
  remoteSeq: number | undefined;
  #state: DialogState;
  onStateChange: ((state: DialogState) => void) | undefined;
  /** Called when a target refresh changed the remote target (a stored snapshot is then out of date). */
  onTargetRefresh: (() => void) | undefined;

  constructor(init: DialogInit) {
    this.callId = init.callId;
    this.localTag = init.localTag;
    this.remoteTag = init.remoteTag;
    this.localUri = init.localUri;
    this.remoteUri = init.remoteUri;
    this.remoteTarget = init.remoteTarget;
    this.routeSet = init.routeSet;
    this.localSeq = init.localSeq;
    this.remoteSeq = init.remoteSeq;
    this.#state = init.state;
  }

  /** §12.1.2: the UAC side, from the request sent and a 1xx (with To tag) or 2xx received. */
  static fromUac(request: SipRequest, response: SipResponse): Dialog {
    return new Dialog({
      callId: request.callId,
      localTag: request.from.tag ?? '',
      remoteTag: response.to.tag ?? '',
      localUri: withoutTag(request.headers.get('From') ?? ''),
      remoteUri: withoutTag(request.headers.get('To') ?? ''),
      remoteTarget: contactUri(response.headers) ?? request.uri,
      // §12.1.2: the route set is the Record-Route list in reverse order.
      routeSet: response.headers.getAll('Record-Route').reverse(),
      localSeq: request.cseq.seq,
      remoteSeq: undefined,
      state: response.status < 200 ? 'Early' : 'Confirmed',
    });
  }

  /** §12.1.1: the UAS side, from the request received and the tag we put in our response. */
  static fromUas(request: SipRequest, localTag: string, state: DialogState): Dialog {
    return new Dialog({
      callId: request.callId,
      localTag,
      remoteTag: request.from.tag ?? '',
      localUri: withoutTag(request.headers.get('To') ?? ''),
      remoteUri: withoutTag(request.headers.get('From') ?? ''),
      remoteTarget: contactUri(request.headers) ?? '',
      routeSet: request.headers.getAll('Record-Route'),
      // §12.1.1: the local sequence number starts empty; we start at a random value below 2**31 / 2.
      localSeq: Math.floor(Math.random() * 0x10000),
      remoteSeq: request.cseq.seq,
      state,
    });
  }

  /**
   * A confirmed dialog rebuilt in another process from its snapshot. Its next request carries the
   * snapshot's CSeq plus the margin of dialog-snapshot.ts, above what the owner sent since.
   */
  static fromSnapshot(s: DialogSnapshot): Dialog {
    return new Dialog({
      callId: s.callId, localTag: s.localTag, remoteTag: s.remoteTag, localUri: s.localUri, remoteUri: s.remoteUri,
      remoteTarget: s.remoteTarget, routeSet: [...s.routeSet], localSeq: snapshotCSeq(s) - 1, remoteSeq: undefined, state: 'Confirmed',
    });
  }

  /** §12.2.1.1: what a request in this dialog is built from, as JSON, with the next hop's transport. */
  snapshot(transport: SipProtocol): DialogSnapshot {
    return {
      callId: this.callId, localTag: this.localTag, remoteTag: this.remoteTag, localUri: this.localUri, remoteUri: this.remoteUri,
      remoteTarget: this.remoteTarget, routeSet: [...this.routeSet], localSeq: this.localSeq, transport,
    };
  }

  get id(): string {
    return dialogId(this.callId, this.localTag, this.remoteTag);
  }

  get state(): DialogState {
    return this.#state;
  }

  /** Feeds an event to the machine; returns false when it is not accepted in the current state. */
  handle(event: DialogEvent): boolean {
    const to = nextDialogState(this.#state, event);
    if (to === undefined) return false;
    if (to !== this.#state) this.transition(to);
    return true;
  }

  /** The one method that changes state. */
  transition(to: DialogState): void {
    assertEdge('Dialog', DIALOG_EDGES, this.#state, to);
    this.#state = to;
    this.onStateChange?.(to);
  }

  /** §13.2.2.4: a 2xx recomputes the route set and remote target of an early dialog. */
  confirmFromUac(response: SipResponse): void {
    this.routeSet = response.headers.getAll('Record-Route').reverse();
    this.refreshTarget(response.headers);
  }

  /** §12.2.1.2 / §12.2.2: a target-refresh request or response replaces the remote target. */
  refreshTarget(headers: SipHeaders): void {
    const c = contactUri(headers);
    if (!c || c === this.remoteTarget) return;
    this.remoteTarget = c;
    this.onTargetRefresh?.();
  }

  /**
   * §12.2.2: a request whose CSeq is lower than or equal to the remote sequence number is out of
   * order (the UAS answers 500); otherwise the remote sequence number advances. Returns false for
   * out-of-order requests. Retransmissions (same branch) are absorbed by the server transaction
   * before this point, so an equal CSeq here is a new request on a new branch.
   */
  acceptRemoteCSeq(request: SipRequest): boolean {
    const seq = request.cseq.seq;
    if (request.method === 'ACK' || request.method === 'CANCEL') return true;
    if (this.remoteSeq !== undefined && seq <= this.remoteSeq) return false;
    this.remoteSeq = seq;
    return true;
  }

  /**
   * §12.2.1.1: a request within the dialog. The CSeq increases by one for every request but ACK
   * and CANCEL (pass `cseq` for those). Loose routing puts the remote target in the Request-URI and
   * the route set in Route; a strict first route (no `lr`) becomes the Request-URI instead.
   */
  createRequest(method: string, cseq?: number): SipRequest {
    const seq = cseq ?? ++this.localSeq;
    const h = new SipHeaders();
    let uri = this.remoteTarget;
    let routes = this.routeSet;
    const first = routes[0];
    if (first !== undefined && !isLooseRoute(first)) {
      uri = stripBrackets(first);
      routes = [...routes.slice(1), `<${this.remoteTarget}>`];
    }
    for (const r of routes) h.append('Route', r);
    h.append('Max-Forwards', '70');
    h.append('From', `${this.localUri};tag=${this.localTag}`);
    h.append('To', `${this.remoteUri};tag=${this.remoteTag}`);
    h.append('Call-ID', this.callId);
    h.append('CSeq', `${seq} ${method}`);
    return new SipRequest(method, uri, h);
  }

  /** The URI the next request goes to: the first Route, else the remote target (§8.1.2). */
  nextHopUri(): string {
    const first = this.routeSet[0];
    return first !== undefined ? stripBrackets(first) : this.remoteTarget;
  }
}

function stripBrackets(nameAddr: string): string {
  const m = /<([^>]*)>/.exec(nameAddr);
  return (m?.[1] ?? nameAddr).trim();
}

function isLooseRoute(route: string): boolean {
  try {
    return parseUri(stripBrackets(route)).params.has('lr');
  } catch {
    return true;
  }
}
