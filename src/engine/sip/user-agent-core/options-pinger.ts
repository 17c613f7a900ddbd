/** @module OPTIONS keep-alive pings to configured targets (carriers) with up/down state (RFC 3261 §11). */
import type { TimerHandle } from '../../../common/clock.js';
import { SipHeaders, SipRequest } from '../messages/sip-message.js';
import type { DialogHost } from '../dialogs/dialog-host.js';
import { randomToken } from './user-agent-core.js';

/** A pinged target. */
export interface PingTarget {
  /** Caller's name for it (carrier id), passed back in state callbacks. */
  id: string;
  /** SIP URI to send OPTIONS to. */
  uri: string;
}

export type TargetState = 'up' | 'down';

/** Options of an {@link OptionsPinger}. */
export interface OptionsPingerOptions {
  targets: readonly PingTarget[];
  /** Interval between pings per target; default 30 s. */
  intervalMs?: number;
  /** Identity for From. */
  from: string;
  /** Called on every change of a target's state (and on the first result). */
  onTargetState: (id: string, state: TargetState, status: number) => void;
}

/**
 * Any final response means the target is up (a carrier answering 404 or 405 to OPTIONS is alive);
 * a timeout (Timer F) or transport error means down.
 */
export class OptionsPinger {
  readonly #o: OptionsPingerOptions;
  readonly #host: DialogHost;
  readonly #state = new Map<string, TargetState>();
  readonly #timers = new Map<string, TimerHandle>();
  #stopped = true;

  constructor(options: OptionsPingerOptions, host: DialogHost) {
    this.#o = options;
    this.#host = host;
  }

  start(): void {
    this.#stopped = false;
    for (const t of this.#o.targets) this.#ping(t);
  }

  stop(): void {
    this.#stopped = true;
    for (const h of this.#timers.values()) h.cancel();
    this.#timers.clear();
  }

  /** Current state of a target; undefined before its first result. */
  stateOf(id: string): TargetState | undefined {
    return this.#state.get(id);
  }

  #ping(t: PingTarget): void {
    if (this.#stopped) return;
    const target = this.#host.targetFor(t.uri);
    const h = new SipHeaders();
    h.append('Max-Forwards', '70');
    h.append('From', `<${this.#o.from}>;tag=${randomToken()}`);
    h.append('To', `<${t.uri}>`);
    h.append('Call-ID', randomToken(12));
    h.append('CSeq', '1 OPTIONS');
    h.append('Accept', 'application/sdp');
    let settled = false;
    const settle = (state: TargetState, status: number): void => {
      if (settled) return;
      settled = true;
      if (this.#state.get(t.id) !== state) {
        this.#state.set(t.id, state);
        this.#o.onTargetState(t.id, state, status);
      }
      if (!this.#stopped) this.#timers.set(t.id, this.#host.clock.setTimeout(() => this.#ping(t), this.#o.intervalMs ?? 30_000));
    };
    try {
      this.#host.sendRequest(new SipRequest('OPTIONS', t.uri, h), target, {
        onResponse: (res) => { if (res.status >= 200) settle('up', res.status); },
        onTimeout: () => settle('down', 408),
        onTransportError: () => settle('down', 503),
      });
    } catch {
      // No listening point for the target's transport (TLS resolved by NAPTR without sip.tls): as a transport error.
      settle('down', 503);
    }
  }
}
