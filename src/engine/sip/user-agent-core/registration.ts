/**
 * @module Outbound registration (RFC 3261 §10.2) for carriers that require it: REGISTER with
 * digest retry, refresh before expiry, 423 handling, and de-registration.
 */
import type { TimerHandle } from '../../../common/clock.js';
import { SipHeaders, SipRequest, type SipResponse } from '../messages/sip-message.js';
import { DigestClient, type DigestCredentials } from '../auth/digest-client.js';
import type { DialogHost } from '../dialogs/dialog-host.js';
import { randomToken } from './user-agent-core.js';
import { TypedEvents } from './typed-events.js';

/** What to register. */
export interface RegistrationOptions {
  /** Registrar Request-URI, e.g. `sip:carrier.example`. */
  registrar: string;
  /** Address of record, e.g. `sip:+15550000@carrier.example`. */
  aor: string;
  credentials?: DigestCredentials;
  /** Requested lifetime in seconds; default 3600. */
  expires?: number;
  /** Where to send, when not the registrar's host. */
  proxy?: string;
}

export type RegistrationEvents = {
  /** The registrar accepted; `expires` is the granted lifetime in seconds. */
  registered: [expires: number];
  /** A final failure; the registration retries after a pause. */
  failed: [status: number, reason: string];
  unregistered: [];
};

/** Seconds before expiry at which to refresh: half the lifetime for short ones, else a minute early. */
export function refreshDelaySeconds(granted: number): number {
  return granted > 120 ? granted - 60 : granted / 2;
}

/** Retry pause after a failed REGISTER. */
const RETRY_AFTER_FAILURE_MS = 30_000;

/** One binding kept alive at one registrar. */
export class Registration {
  readonly events = new TypedEvents<RegistrationEvents>();
  readonly #o: RegistrationOptions;
  readonly #host: DialogHost;
  readonly #auth: DigestClient | undefined;
  /** §10.2: the same Call-ID for every REGISTER to this registrar, CSeq increasing. */
  readonly #callId = randomToken(12);
  readonly #fromTag = randomToken();
  #cseq = 0;
  #expires: number;
  #timer: TimerHandle | undefined;
  #stopped = false;

  constructor(options: RegistrationOptions, host: DialogHost) {
    this.#o = options;
    this.#host = host;
    this.#auth = options.credentials ? new DigestClient(options.credentials) : undefined;
    this.#expires = options.expires ?? 3600;
  }

  start(): void {
    this.#stopped = false;
    this.#send(this.#expires);
  }

  /** Removes the binding (Expires: 0) and stops refreshing. */
  stop(): void {
    this.#stopped = true;
    this.#timer?.cancel();
    this.#send(0);
  }

  #send(expires: number): void {
    const target = this.#host.targetFor(this.#o.proxy ?? this.#o.registrar);
    const h = new SipHeaders();
    h.append('Max-Forwards', '70');
    h.append('From', `<${this.#o.aor}>;tag=${this.#fromTag}`);
    h.append('To', `<${this.#o.aor}>`);
    h.append('Call-ID', this.#callId);
    h.append('CSeq', `${++this.#cseq} REGISTER`);
    let contact: string;
    try {
      contact = this.#host.contact(target.protocol);
    } catch {
      // No listening point for the registrar's transport: a transport error, retried later like one.
      return this.#failed(503, `no ${target.protocol} listening point`);
    }
    h.append('Contact', contact);
    h.append('Expires', String(expires));
    const req = new SipRequest('REGISTER', this.#o.registrar, h);
    const creds = this.#auth?.hasChallenge ? this.#auth.authorize('REGISTER', this.#o.registrar) : undefined;
    if (creds) h.append(creds.name, creds.value);
    this.#host.sendRequest(req, target, {
      onResponse: (res) => this.#onResponse(res, expires),
      onTimeout: () => this.#failed(408, 'Request Timeout'),
      onTransportError: () => this.#failed(503, 'Service Unavailable'),
    });
  }

  #onResponse(res: SipResponse, asked: number): void {
    if (res.status < 200) return;
    if (res.status < 300) {
      if (asked === 0) return this.events.emit('unregistered');
      const granted = grantedExpires(res, asked);
      this.events.emit('registered', granted);
      this.#schedule(refreshDelaySeconds(granted) * 1000, () => this.#send(this.#expires));
      return;
    }
    if ((res.status === 401 || res.status === 407) && this.#auth) {
      const challenges = res.headers.getAll(res.status === 401 ? 'WWW-Authenticate' : 'Proxy-Authenticate');
      if (this.#auth.handleChallenge(res.status, challenges)) return this.#send(asked);
    }
    // §10.2.8: 423 Interval Too Brief carries the Min-Expires to use.
    const min = parseInt(res.headers.get('Min-Expires') ?? '', 10);
    if (res.status === 423 && Number.isFinite(min) && min > asked) {
      this.#expires = min;
      return this.#send(min);
    }
    this.#failed(res.status, res.reason);
  }

  #failed(status: number, reason: string): void {
    this.events.emit('failed', status, reason);
    this.#schedule(RETRY_AFTER_FAILURE_MS, () => this.#send(this.#expires));
  }

  #schedule(ms: number, fn: () => void): void {
    this.#timer?.cancel();
    if (this.#stopped) return;
    this.#timer = this.#host.clock.setTimeout(fn, ms);
  }
}

/** §10.2.4: the lifetime is the Contact's expires parameter, else the Expires header, else what we asked. */
function grantedExpires(res: SipResponse, asked: number): number {
  const contact = res.headers.getAll('Contact')[0] ?? '';
  const m = /;\s*expires\s*=\s*(\d+)/i.exec(contact);
  const v = parseInt(m?.[1] ?? res.headers.get('Expires') ?? '', 10);
  return Number.isFinite(v) && v > 0 ? v : asked;
}
