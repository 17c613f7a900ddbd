/**
 * @module SipUserAgent: the SIP layer's facade for the calls layer. It wires the UA core to the
 * transport, keeps the live dialogs, applies inbound digest authentication and RFC 4028 policy,
 * and creates the UAC and UAS handles.
 */
import { systemClock, type Clock } from '../../../common/clock.js';
import { isStaleRefusal, type DigestServer } from '../auth/digest-server.js';
import { parseUri } from '../grammar/uri.js';
import { createResponse } from '../messages/response.js';
import type { SipMessage, SipRequest, SipResponse } from '../messages/sip-message.js';
import type { DialogHost } from '../dialogs/dialog-host.js';
import type { DialogSnapshot } from '../dialogs/dialog-snapshot.js';
import type { SessionDialog } from '../dialogs/session-dialog.js';
import { decideUasSessionTimer, MIN_SE_FLOOR } from '../dialogs/session-timer.js';
import type { InviteServerTransaction } from '../transactions/invite-server-transaction.js';
import { DEFAULT_TIMER_SETTINGS, type TimerSettings } from '../transactions/timers.js';
import type { ClientTransactionUser } from '../transactions/transaction.js';
import { InboundCall } from './inbound-call.js';
import { OptionsPinger, type OptionsPingerOptions } from './options-pinger.js';
import { OutboundCall, type InviteOptions, type OutboundCallHost } from './outbound-call.js';
import { Registration, type RegistrationOptions } from './registration.js';
import { sendSnapshotBye, type SnapshotByeOutcome } from './snapshot-bye.js';
import { targetFromUri, type SipProtocol, type SipSource, type SipTarget, type SipTransportPort } from './transport-port.js';
import { TypedEvents } from './typed-events.js';
import { randomToken, UserAgentCore } from './user-agent-core.js';
import type { SourceVerdict } from './user-agent-core-delegate.js';

/** Inbound digest authentication for one source (a carrier configured with it). */
export interface InboundAuth {
  server: DigestServer;
  passwordOf(username: string): string | undefined;
}

/** Options of a {@link SipUserAgent}; everything but `transport` has a default. */
export interface SipUserAgentOptions {
  transport: SipTransportPort;
  clock?: Clock;
  /** T1, T2, T4 (RFC 3261 §17.1.1.1). */
  timers?: TimerSettings;
  /** Server and User-Agent header value. */
  userAgent?: string;
  /** User part of our Contact URI. */
  contactUser?: string;
  /** Decides, per source, whether an out-of-dialog INVITE is allowed, refused with 403, or dropped. */
  authorizeSource?: (source: SipSource, request: SipRequest) => SourceVerdict;
  /** Per-source rate limiting: return false to drop the request. */
  admitRequest?: (source: SipSource, request: SipRequest) => boolean;
  /** Digest challenge for INVITEs from sources configured with inbound authentication. */
  inboundAuth?: (source: SipSource, request: SipRequest) => InboundAuth | undefined;
  /** Our Min-SE (RFC 4028), default 90 s. */
  minSessionExpires?: number;
  /** Resolves a URI to a transport target (RFC 3263); default: numeric host, port and transport param. */
  resolveTarget?: (uri: string) => SipTarget;
  /**
   * The outbound proxy (RFC 3261 §8.1.2), a SIP URI: every out-of-dialog request goes there with
   * it as a pre-loaded Route; the dialogs' route sets then come from Record-Route.
   */
  outboundProxy?: string;
  /** Seconds the UA is out of service for (draining): out-of-dialog OPTIONS get 503 meanwhile. */
  unavailableFor?: () => number | undefined;
}

/** Events of a {@link SipUserAgent}. */
export type SipUserAgentEvents = {
  /** A new incoming call (100 Trying sent unless a listener answered at once): answer with progress/accept/reject. */
  invite: [call: InboundCall];
};

/** Methods answered by the UA (the Allow header). */
export const ALLOWED_METHODS = ['INVITE', 'ACK', 'BYE', 'CANCEL', 'OPTIONS', 'INFO', 'UPDATE', 'REFER', 'NOTIFY', 'PRACK'] as const;

/** The SIP user agent: one per listening address set. */
export class SipUserAgent implements OutboundCallHost, DialogHost {
  readonly events = new TypedEvents<SipUserAgentEvents>();
  readonly clock: Clock;
  readonly timers: TimerSettings;
  readonly userAgent: string;
  readonly core: UserAgentCore;
  readonly #o: SipUserAgentOptions;
  readonly #sessions = new Map<string, SessionDialog>();
  readonly #pending = new Map<InviteServerTransaction, InboundCall>();
  readonly #pingers: OptionsPinger[] = [];

  constructor(options: SipUserAgentOptions) {
    this.#o = options;
    this.clock = options.clock ?? systemClock;
    this.timers = options.timers ?? DEFAULT_TIMER_SETTINGS;
    this.userAgent = options.userAgent ?? 'voice-gateway';
    this.core = new UserAgentCore({
      transport: options.transport, clock: this.clock, timers: this.timers, userAgent: this.userAgent,
      capabilities: {
        methods: [...ALLOWED_METHODS],
        // 100rel: an INVITE that requires it gets reliable provisional responses (RFC 3262 §3).
        extensions: ['timer', '100rel'],
        contentTypes: ['application/sdp', 'message/sipfrag', 'application/dtmf-relay', 'application/dtmf', 'multipart/mixed'],
        answerContentTypes: ['application/sdp'],
      },
      ...(options.authorizeSource ? { authorizeSource: options.authorizeSource } : {}),
      ...(options.admitRequest ? { admitRequest: options.admitRequest } : {}),
      ...(options.unavailableFor ? { unavailableFor: options.unavailableFor } : {}),
    });
    this.core.delegate = {
      onInvite: (req, tx, source) => this.#onInvite(req, tx, source),
      onDialogRequest: (id, req, tx) => {
        const s = this.#sessions.get(id);
        if (!s) return false;
        s.receiveRequest(req, tx);
        return true;
      },
      onDialogAck: (id, ack) => this.#sessions.get(id)?.receiveAck(ack),
      onStray2xx: (id, res) => this.#sessions.get(id)?.receiveStray2xx(res),
      onCancel: (tx, cancel) => {
        const call = this.#pending.get(tx);
        if (call) call.cancelled(cancel);
        else tx.respond(createResponse(tx.request, 487, undefined, { toTag: randomToken() }));
      },
    };
  }

  /** Feeds a message received by the transport. */
  receive(message: SipMessage, source: SipSource): void {
    this.core.receive(message, source);
  }

  /** Number of live dialogs (a metric, and how the benchmark counts idle dialogs). */
  get dialogCount(): number {
    return this.#sessions.size;
  }

  /** The outbound proxy every out-of-dialog request goes through, if any. */
  get outboundProxy(): string | undefined {
    return this.#o.outboundProxy;
  }

  /** Places a call: returns the UAC handle; listen to its events, then it starts. */
  invite(options: InviteOptions): OutboundCall {
    // The outbound proxy is the INVITE's next hop and its CANCEL's (§9.1: same destination).
    const proxy = this.#proxyFor(options.target);
    const call = new OutboundCall(proxy ? { ...options, proxy } : options, this);
    queueMicrotask(() => call.start());
    return call;
  }

  /**
   * Ends a dialog another process held, from the snapshot it stored (docs/ARCHITECTURE.md
   * "Process roles"): a BYE with `Reason: Q.850;cause=41` in a new client transaction; resolves
   * with the final status or a local 408/503.
   */
  byeFromSnapshot(snapshot: DialogSnapshot): Promise<SnapshotByeOutcome> {
    return sendSnapshotBye(this, snapshot);
  }

  /** Starts an outbound registration that refreshes itself until stopped. */
  register(options: RegistrationOptions): Registration {
    const r = new Registration(options, this);
    r.start();
    return r;
  }

  /** Starts OPTIONS pings to the given targets; state changes go to `onTargetState`. */
  pingTargets(options: Omit<OptionsPingerOptions, 'from'> & { from?: string }): OptionsPinger {
    const p = new OptionsPinger({ ...options, from: options.from ?? `sip:${this.#o.contactUser ?? 'gateway'}@${this.#o.transport.localAddress('UDP').host}` }, this);
    this.#pingers.push(p);
    p.start();
    return p;
  }

  /** Stops pings and timers and forgets every transaction (shutdown). Dialogs are not BYEd here. */
  dispose(): void {
    for (const p of this.#pingers) p.stop();
    this.#pending.clear();
    this.core.dispose();
  }

  // DialogHost and OutboundCallHost.

  /** Our Contact header value for `protocol` (the listening address, with `transport` for TCP/TLS). */
  contact(protocol: SipProtocol): string {
    const a = this.#o.transport.localAddress(protocol);
    const host = a.host.includes(':') ? `[${a.host}]` : a.host;
    const transport = protocol === 'UDP' ? '' : `;transport=${protocol.toLowerCase()}`;
    return `<sip:${this.#o.contactUser ?? 'gateway'}@${host}:${a.port}${transport}>`;
  }

  /** The transport target for a URI, through `resolveTarget` when configured. */
  targetFor(uri: string): SipTarget {
    return (this.#o.resolveTarget ?? targetFromUri)(uri);
  }

  /** Sends a request in a new client transaction. @internal */
  sendRequest(request: SipRequest, target: SipTarget, user: ClientTransactionUser): void {
    this.core.sendRequest(request, this.#nextHop(request, target), user);
  }

  /** Sends outside any transaction (the ACK for a 2xx). @internal */
  sendStateless(message: SipMessage, target: SipTarget): void {
    this.core.sendStateless(message, target);
  }

  /** The 200 to an OPTIONS request (§11.2). @internal */
  optionsResponse(request: SipRequest): SipResponse {
    return this.core.optionsResponse(request);
  }

  /** Forgets an ended dialog. @internal */
  removeDialog(id: string): void {
    this.#sessions.delete(id);
  }

  /** Registers a dialog so in-dialog requests find it. @internal */
  addSession(session: SessionDialog): void {
    this.#sessions.set(session.id, session);
  }

  /** An inbound call got its final response: a CANCEL can no longer match it (the core answers 481). */
  callFinished(tx: InviteServerTransaction): void {
    this.#pending.delete(tx);
  }

  /** Sends an INVITE in a client transaction; returns its branch. @internal */
  sendInvite(request: SipRequest, target: SipTarget, onResponse: (r: SipResponse) => void, onFailure: (status: 408 | 503, detail?: string) => void): string {
    const tx = this.core.sendRequest(request, this.#nextHop(request, target), {
      onResponse, onTimeout: () => onFailure(408), onTransportError: (err) => onFailure(503, err instanceof Error ? err.message : undefined),
    });
    return tx.id;
  }

  /** Sends a CANCEL on its INVITE's branch (§9.1). @internal */
  sendCancel(cancel: SipRequest, target: SipTarget, branch: string): void {
    this.core.sendRequest(cancel, this.#nextHop(cancel, target), {}, branch);
  }

  /**
   * Where a request goes. RFC 3261 §8.1.2: with an outbound proxy, an out-of-dialog request (no
   * To tag: INVITE, its CANCEL, OPTIONS, REGISTER) carries it as the only, pre-loaded Route and
   * is sent to it; the proxy resolves the Request-URI (RFC 3263). In-dialog requests follow the
   * route set their dialog learned from Record-Route.
   */
  #nextHop(request: SipRequest, target: SipTarget): SipTarget {
    const proxy = this.#proxyFor(request.uri);
    if (proxy === undefined || request.to.tag !== undefined) return target;
    request.headers.delete('Route');
    request.headers.prepend('Route', `<${proxy.replace(/;lr$/, '')};lr>`);
    return this.targetFor(proxy);
  }

  /**
   * The outbound proxy for a Request-URI. A loopback one (the sandbox far end) names this host,
   * which a proxy on another address cannot reach: it goes direct unless the proxy is on loopback too.
   */
  #proxyFor(uri: string): string | undefined {
    const proxy = this.#o.outboundProxy;
    if (proxy === undefined) return undefined;
    const loopback = (u: string): boolean => {
      try {
        return /^(127\.|::1$|localhost$)/i.test(parseUri(u).host);
      } catch {
        return false;
      }
    };
    return loopback(uri) && !loopback(proxy) ? undefined : proxy;
  }

  #onInvite(req: SipRequest, tx: InviteServerTransaction, source: SipSource): void {
    const reject = (status: number, headers: [string, string][] = [], reason?: string): void =>
      tx.respond(createResponse(req, status, reason, { toTag: randomToken(), headers: [['Server', this.userAgent], ...headers] }));
    const auth = this.#o.inboundAuth?.(source, req);
    if (auth) {
      const verdict = auth.server.verify(req.headers.get('Authorization'), { method: 'INVITE', requestUri: req.uri, source: source.address }, (u) => auth.passwordOf(u));
      // RFC 7616 §3.4.6: a digest uri other than the Request-URI is a bad request, not a new challenge.
      if (!verdict.ok && verdict.reason === 'uri-mismatch') return reject(400, [], 'Bad Request (digest uri is not the Request-URI)');
      if (!verdict.ok) return reject(401, auth.server.challenge(source.address, isStaleRefusal(verdict)).map((c) => ['WWW-Authenticate', c]));
    }
    const minSe = Math.max(this.#o.minSessionExpires ?? MIN_SE_FLOOR, MIN_SE_FLOOR);
    const supportsTimer = /\btimer\b/i.test(req.headers.getAll('Supported').join(','));
    const se = decideUasSessionTimer(req.headers.get('Session-Expires'), req.headers.get('Min-SE'), supportsTimer, minSe);
    // RFC 4028 §9: too small an interval gets 422 with our Min-SE.
    if (se.kind === 'reject-422') return reject(422, [['Min-SE', String(se.minSe)]]);
    const call = new InboundCall(req, tx, source, this, this, se.sessionExpires);
    this.#pending.set(tx, call);
    if (this.events.has('invite')) this.events.emit('invite', call);
    else call.reject(480);
  }
}
