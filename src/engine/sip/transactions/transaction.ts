/** @module What the four transaction classes share: the sender they write to, their users, and named timers. */
import type { Clock, TimerHandle } from '../../../common/clock.js';
import { serializeMessage } from '../messages/serialize.js';
import type { SipMessage, SipRequest, SipResponse } from '../messages/sip-message.js';
import { DEFAULT_TIMER_SETTINGS, type TimerSettings } from './timers.js';

/**
 * Where a transaction writes its messages: the transport bound to its peer. A rejected promise or
 * a throw counts as a transport error (RFC 3261 §17.1.4, §17.2.4).
 */
export interface TransactionSender {
  /** True for TCP and TLS: no retransmissions, Timers D, I, J, K are zero (§17.1.1.2). */
  readonly reliable: boolean;
  /** Sends a message, or the wire bytes of one already serialized (a server transaction's kept final response). */
  send(message: SipMessage | Buffer): void | Promise<unknown>;
}

/**
 * A final response as the bytes a completed server transaction keeps for retransmitted requests,
 * in a buffer of its own. A server transaction lingers for Timer J or I after its final response
 * (32 s on UDP), so thousands are alive at a few hundred calls per second: keeping the parsed
 * request and response (header arrays, maps, cached parses: about 9 KB per transaction) made every
 * young-generation GC copy them; these bytes live outside the JavaScript heap. Not taken from
 * Node's shared 8 KiB pool, which one kept slice would pin whole.
 */
export function wireBytes(response: SipResponse): Buffer {
  const pooled = serializeMessage(response);
  const own = Buffer.allocUnsafeSlow(pooled.length);
  pooled.copy(own);
  return own;
}

/** Construction options shared by every transaction. */
export interface TransactionOptions {
  clock: Clock;
  timers?: TimerSettings;
}

/** The transaction user of a client transaction (the UAC core); every callback is optional. */
export interface ClientTransactionUser {
  /** A response the TU must see: every 1xx and the first final (and, for INVITE, each 2xx). */
  onResponse?(response: SipResponse): void;
  /** Timer B or F fired: the TU treats it as a 408 (§8.1.3.1). */
  onTimeout?(): void;
  onTransportError?(error: unknown): void;
  onTerminated?(): void;
}

/** The transaction user of a server transaction (the UAS core). */
export interface ServerTransactionUser {
  /** RFC 6026 §7.1: an ACK for a 2xx, received in the Accepted state. */
  onAck?(ack: SipRequest): void;
  /** Timer H fired: the ACK for a non-2xx never came (§17.2.1). */
  onTimeout?(): void;
  onTransportError?(error: unknown): void;
  onTerminated?(): void;
}

/** The kind of a response as the §17 machines see it. */
export function responseClass(status: number): '1xx' | '2xx' | '300-699' {
  if (status < 200) return '1xx';
  return status < 300 ? '2xx' : '300-699';
}

export function timerSettings(options: TransactionOptions): TimerSettings {
  return options.timers ?? DEFAULT_TIMER_SETTINGS;
}

/** Named one-shot timers owned by one machine's `transition`. */
export class TimerSet<N extends string> {
  readonly #clock: Clock;
  readonly #handles = new Map<N, TimerHandle>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Starts (or restarts) timer `name`; a zero interval fires on the next turn, as §17 allows. */
  start(name: N, ms: number, fire: () => void): void {
    this.clear(name);
    this.#handles.set(name, this.#clock.setTimeout(() => {
      this.#handles.delete(name);
      fire();
    }, ms));
  }

  clear(name: N): void {
    this.#handles.get(name)?.cancel();
    this.#handles.delete(name);
  }

  clearAll(): void {
    for (const h of this.#handles.values()) h.cancel();
    this.#handles.clear();
  }
}

/** Sends and turns any synchronous or asynchronous failure into a call of `onError`. */
export function sendGuarded(sender: TransactionSender, message: SipMessage | Buffer, onError: (err: unknown) => void): void {
  try {
    const p = sender.send(message);
    if (p) p.catch(onError);
  } catch (err) {
    onError(err);
  }
}
