/**
 * @module The UA core (RFC 3261 §8, §17): owns the transaction tables, matches incoming messages
 * to transactions and dialogs, answers what needs no application (CANCEL, OPTIONS, 481, 482),
 * and applies the protection hooks before any INVITE reaches the application.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../../../common/clock.js';
import { formatVia } from '../grammar/via.js';
import { createResponse } from '../messages/response.js';
import { checkUasRequest, type UasCapabilities } from '../messages/uas-checks.js';
import type { SipMessage, SipRequest, SipResponse } from '../messages/sip-message.js';
import { dialogId } from '../dialogs/dialog.js';
import { InviteClientTransaction } from '../transactions/invite-client-transaction.js';
import { InviteServerTransaction } from '../transactions/invite-server-transaction.js';
import { NonInviteClientTransaction } from '../transactions/non-invite-client-transaction.js';
import { NonInviteServerTransaction } from '../transactions/non-invite-server-transaction.js';
import { clientKeyOfResponse, clientTransactionKey, inviteKeyOfCancel, newBranch, serverTransactionKey } from '../transactions/transaction-key.js';
import type { ClientTransactionUser, TransactionSender } from '../transactions/transaction.js';
import type { TimerSettings } from '../transactions/timers.js';
import type { SourceVerdict, UserAgentCoreDelegate } from './user-agent-core-delegate.js';
import type { SipSource, SipTarget, SipTransportPort } from './transport-port.js';

type ClientTransaction = InviteClientTransaction | NonInviteClientTransaction;
type ServerTransaction = InviteServerTransaction | NonInviteServerTransaction;

/** Options of the core, fully defaulted by {@link SipUserAgent}. */
export interface UserAgentCoreOptions {
  transport: SipTransportPort;
  clock: Clock;
  timers?: TimerSettings;
  capabilities: UasCapabilities;
  /** Sent in Server/User-Agent headers. */
  userAgent: string;
  /** Carrier source filtering: decides for each out-of-dialog INVITE from a source; default allow. */
  authorizeSource?: (source: SipSource, request: SipRequest) => SourceVerdict;
  /** Per-source rate limit hook: false drops the request (the transport may also limit). */
  admitRequest?: (source: SipSource, request: SipRequest) => boolean;
  /**
   * Seconds this UA is out of service for (draining), or undefined while in service: an
   * out-of-dialog OPTIONS then gets 503 with that Retry-After, the answer an INVITE would get
   * (§11.2), so a proxy probing with OPTIONS stops choosing this UA.
   */
  unavailableFor?: () => number | undefined;
}

/** A new random token for tags, branches and Call-IDs (RFC 3261 §19.3: at least 32 bits of randomness). */
export function randomToken(bytes = 8): string {
  return randomBytes(bytes).toString('hex');
}

export class UserAgentCore {
  readonly options: UserAgentCoreOptions;
  delegate: UserAgentCoreDelegate = {};
  readonly #client = new Map<string, ClientTransaction>();
  readonly #server = new Map<string, ServerTransaction>();
  /** §8.2.2.2 merged-request detection: From tag, Call-ID, CSeq of pending requests without To tag. */
  readonly #merge = new Map<string, string>();

  constructor(options: UserAgentCoreOptions) {
    this.options = options;
  }

  /** Number of live transactions (for metrics and leak tests). */
  get transactionCount(): number {
    return this.#client.size + this.#server.size;
  }

  /** Entry point for every message the transport accepted. */
  receive(message: SipMessage, source: SipSource): void {
    if (message.kind === 'response') this.#receiveResponse(message);
    else this.#receiveRequest(message, source);
  }

  /** The sender a transaction uses to reach `target`. */
  senderFor(target: SipTarget): TransactionSender {
    const transport = this.options.transport;
    return { reliable: transport.isReliable(target.protocol), send: (m) => (Buffer.isBuffer(m) ? transport.sendRaw(m, target) : transport.send(m, target)) };
  }

  /**
   * Sends a request in a new client transaction: adds our top Via with a fresh branch
   * (§8.1.1.7) and User-Agent, and routes responses to `user`.
   */
  sendRequest(request: SipRequest, target: SipTarget, user: ClientTransactionUser, branch?: string): ClientTransaction {
    // §9.1: a CANCEL reuses its INVITE's branch; every other request gets a new one.
    this.stampVia(request, target, branch ?? newBranch(randomToken()));
    if (!request.headers.has('User-Agent')) request.headers.append('User-Agent', this.options.userAgent);
    const sender = this.senderFor(target);
    const key = clientTransactionKey(request.topVia.branch ?? '', request.method);
    const inner: ClientTransactionUser = { ...user, onTerminated: () => { this.#client.delete(key); user.onTerminated?.(); } };
    const opts = { clock: this.options.clock, ...(this.options.timers ? { timers: this.options.timers } : {}) };
    const tx = request.method === 'INVITE'
      ? new InviteClientTransaction(request, sender, inner, opts)
      : new NonInviteClientTransaction(request, sender, inner, opts);
    this.#client.set(key, tx);
    tx.start();
    return tx;
  }

  /** Writes our Via on top of a request (replacing one we added before, for resends). */
  stampVia(request: SipRequest, target: SipTarget, branch: string): void {
    const local = this.options.transport.localAddress(target.protocol);
    request.headers.delete('Via');
    request.headers.append('Via', formatVia({ protocol: target.protocol, host: local.host, port: local.port, params: new Map(), branch, rport: null }));
  }

  /** Sends outside any transaction: the ACK for a 2xx (§13.2.2.4) and its retransmissions. */
  sendStateless(message: SipMessage, target: SipTarget): void {
    if (message.kind === 'request' && !message.headers.has('Via')) this.stampVia(message, target, newBranch(randomToken()));
    try {
      const p = this.options.transport.send(message, target);
      if (p) p.catch(() => undefined);
    } catch {
      // §13.2.2.4: a lost ACK is recovered by the 2xx retransmission; nothing to report.
    }
  }

  /** Responds on a new server transaction-less path: answers with `status` (400, 403, 481...). */
  respondStatelessly(request: SipRequest, source: SipSource, status: number, headers: [string, string][] = []): void {
    if (request.method === 'ACK') return;
    this.sendStateless(createResponse(request, status, undefined, { toTag: randomToken(), headers: [['Server', this.options.userAgent], ...headers] }), source);
  }

  #receiveResponse(response: SipResponse): void {
    const tx = this.#client.get(clientKeyOfResponse(response));
    if (tx) {
      tx.receiveResponse(response);
      return;
    }
    // §13.2.2.4: a 2xx retransmitted after the INVITE transaction ended is for the dialog to re-ACK.
    if (response.cseq.method === 'INVITE' && response.status >= 200 && response.status < 300) {
      this.delegate.onStray2xx?.(dialogId(response.callId, response.from.tag ?? '', response.to.tag ?? ''), response);
    }
  }

  #receiveRequest(request: SipRequest, source: SipSource): void {
    const key = serverTransactionKey(request);
    const existing = this.#server.get(key);
    if (existing) {
      existing.receiveRequest(request);
      return;
    }
    if (request.method === 'ACK') {
      // §17.2.3: no transaction matched, so this is the ACK for a 2xx: it belongs to the dialog.
      this.delegate.onDialogAck?.(dialogId(request.callId, request.to.tag ?? '', request.from.tag ?? ''), request);
      return;
    }
    if (this.options.admitRequest && !this.options.admitRequest(source, request)) return;
    const toTag = request.to.tag;
    if (request.method === 'CANCEL') {
      this.#receiveCancel(request, source);
      return;
    }
    if (toTag === undefined && request.method === 'INVITE') {
      const verdict = this.options.authorizeSource?.(source, request) ?? 'allow';
      if (verdict === 'drop') return;
      if (verdict === 'reject') {
        this.respondStatelessly(request, source, 403);
        return;
      }
    }
    const rejection = checkUasRequest(request, this.options.capabilities);
    if (rejection) {
      this.respondStatelessly(request, source, rejection.status, rejection.headers);
      return;
    }
    if (toTag === undefined && this.#isMerged(request, key)) {
      // §8.2.2.2: the same request arrived by another path (forked upstream): 482 Loop Detected.
      this.respondStatelessly(request, source, 482);
      return;
    }
    this.#dispatch(request, source, key, toTag);
  }

  #dispatch(request: SipRequest, source: SipSource, key: string, toTag: string | undefined): void {
    const tx = this.#createServerTransaction(request, source, key);
    if (toTag !== undefined) {
      const id = dialogId(request.callId, toTag, request.from.tag ?? '');
      if (!this.delegate.onDialogRequest?.(id, request, tx)) {
        // §12.2.2: no such dialog.
        tx.respond(createResponse(request, 481, undefined, { headers: [['Server', this.options.userAgent]] }));
      }
      return;
    }
    if (request.method === 'INVITE' && tx instanceof InviteServerTransaction) {
      if (this.delegate.onInvite) this.delegate.onInvite(request, tx, source);
      else tx.respond(createResponse(request, 480, undefined, { toTag: randomToken() }));
      // §17.2.1: a 100 Trying, so the client stops retransmitting, "unless it knows that the TU
      // will generate a provisional or final response within 200 ms". A TU that answered in its
      // synchronous part already has; otherwise the 100 leaves now, before any I/O of the TU's.
      // At a few hundred calls/s the skipped 100 is one of three datagrams sent per call.
      if (!tx.responded) tx.respond(createResponse(request, 100));
      return;
    }
    if (request.method === 'OPTIONS') {
      const retryAfter = this.options.unavailableFor?.();
      if (retryAfter !== undefined) {
        tx.respond(createResponse(request, 503, undefined, { toTag: randomToken(), headers: [['Retry-After', String(retryAfter)], ['Server', this.options.userAgent]] }));
        return;
      }
      tx.respond(this.optionsResponse(request));
      return;
    }
    // BYE, INFO, UPDATE, NOTIFY, PRACK... outside a dialog: §12.2.2 481.
    tx.respond(createResponse(request, 481, undefined, { toTag: randomToken(), headers: [['Server', this.options.userAgent]] }));
  }

  /** §11.2: 200 to OPTIONS with what we allow, accept and support. */
  optionsResponse(request: SipRequest): SipResponse {
    const caps = this.options.capabilities;
    return createResponse(request, 200, undefined, {
      toTag: request.to.tag === undefined ? randomToken() : undefined,
      headers: [
        ['Allow', caps.methods.join(', ')],
        ['Accept', caps.contentTypes.join(', ')],
        ['Supported', caps.extensions.join(', ')],
        ['Server', this.options.userAgent],
      ],
    });
  }

  #createServerTransaction(request: SipRequest, source: SipSource, key: string): ServerTransaction {
    const sender = this.senderFor(source);
    const mergeKey = `${request.from.tag ?? ''}|${request.callId}|${request.cseq.seq}|${request.method}`;
    const onTerminated = (): void => {
      this.#server.delete(key);
      if (this.#merge.get(mergeKey) === key) this.#merge.delete(mergeKey);
    };
    const opts = { clock: this.options.clock, ...(this.options.timers ? { timers: this.options.timers } : {}) };
    const tx = request.method === 'INVITE'
      ? new InviteServerTransaction(key, request, sender, { onTerminated, onAck: (ack) => this.delegate.onDialogAck?.(dialogId(ack.callId, ack.to.tag ?? '', ack.from.tag ?? ''), ack) }, opts)
      : new NonInviteServerTransaction(key, request, sender, { onTerminated }, opts);
    this.#server.set(key, tx);
    if (request.to.tag === undefined) this.#merge.set(mergeKey, key);
    return tx;
  }

  #isMerged(request: SipRequest, key: string): boolean {
    const other = this.#merge.get(`${request.from.tag ?? ''}|${request.callId}|${request.cseq.seq}|${request.method}`);
    return other !== undefined && other !== key;
  }

  /** §9.2: CANCEL gets 200 when it matches a pending INVITE (which then gets 487 from its TU), else 481. */
  #receiveCancel(cancel: SipRequest, source: SipSource): void {
    const invite = this.#server.get(inviteKeyOfCancel(cancel));
    const key = serverTransactionKey(cancel);
    const tx = this.#createServerTransaction(cancel, source, key);
    if (!(invite instanceof InviteServerTransaction) || invite.state !== 'Proceeding') {
      tx.respond(createResponse(cancel, 481, undefined, { toTag: randomToken() }));
      return;
    }
    const toTag = invite.lastResponse?.to.tag;
    tx.respond(createResponse(cancel, 200, undefined, toTag ? { toTag } : {}));
    if (this.delegate.onCancel) this.delegate.onCancel(invite, cancel);
    else invite.respond(createResponse(invite.request, 487, undefined, { toTag: toTag ?? randomToken() }));
  }

  /** Ends every transaction now (shutdown). */
  dispose(): void {
    for (const tx of [...this.#client.values(), ...this.#server.values()]) tx.dispose();
    this.#client.clear();
    this.#server.clear();
    this.#merge.clear();
  }
}
