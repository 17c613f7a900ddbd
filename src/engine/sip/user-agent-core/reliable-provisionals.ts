/**
 * @module RFC 3262 as a UAS: provisional responses to an INVITE sent reliably, numbered by RSeq
 * and retransmitted until the caller acknowledges each one with a PRACK.
 */
import { randomInt } from 'node:crypto';
import type { Clock, TimerHandle } from '../../../common/clock.js';
import type { SipRequest, SipResponse } from '../messages/sip-message.js';
import type { TimerSettings } from '../transactions/timers.js';
import type { ResponseSender } from '../dialogs/uas-2xx-retransmission.js';

/** Whether a request or response lists the option tag `100rel` in Require or Supported (option tags are case-insensitive). */
export function lists100rel(message: SipRequest | SipResponse, header: 'Require' | 'Supported'): boolean {
  return message.headers.getAll(header).some((tag) => tag.trim().toLowerCase() === '100rel');
}

/** §7.2: `RAck: response-num CSeq-num Method`. */
function parseRAck(value: string | undefined): { rseq: number; cseq: number; method: string } | null {
  const match = /^\s*(\d{1,10})\s+(\d{1,10})\s+([A-Za-z]+)\s*$/.exec(value ?? '');
  return match ? { rseq: Number(match[1]), cseq: Number(match[2]), method: match[3]! } : null;
}

/**
 * The reliable provisional responses of one INVITE server transaction.
 *
 * - §3: each gets `Require: 100rel` and an RSeq, the first chosen at random below 2**31 and the
 *   next ones counting up by one. Only one is outstanding at a time: a later one waits in order
 *   until the earlier is acknowledged.
 * - The outstanding one is passed to the transaction again at T1, then at intervals doubling,
 *   until a PRACK matches it; after 64*T1 without one, `onTimeout` runs (the UAS then rejects
 *   the INVITE with a 5xx).
 * - A PRACK matches when its RAck names the outstanding RSeq and the INVITE's CSeq: 200, else 481.
 */
export class ReliableProvisionals {
  readonly #clock: Clock;
  readonly #t1: number;
  readonly #tx: ResponseSender;
  readonly #inviteCseq: number;
  readonly #onTimeout: () => void;
  #nextRSeq = randomInt(1, 2 ** 30);
  #outstanding: { rseq: number; retransmit: TimerHandle; giveUp: TimerHandle } | null = null;
  readonly #waiting: SipResponse[] = [];
  #stopped = false;

  constructor(clock: Clock, timers: Pick<TimerSettings, 'T1'>, tx: ResponseSender, invite: SipRequest, onTimeout: () => void) {
    this.#clock = clock;
    this.#t1 = timers.T1;
    this.#tx = tx;
    this.#inviteCseq = invite.cseq.seq;
    this.#onTimeout = onTimeout;
  }

  /** True while a reliable provisional waits for its PRACK. */
  get awaitingPrack(): boolean {
    return this.#outstanding !== null;
  }

  /** Sends `response` (a 101-199) reliably now, or after the ones before it were acknowledged. */
  send(response: SipResponse): void {
    if (this.#stopped) return;
    response.headers.append('Require', '100rel');
    if (this.#outstanding === null) this.#transmit(response);
    else this.#waiting.push(response);
  }

  /** A PRACK in the early dialog: the status to answer it with (200 when it matched, else 481). */
  prack(request: SipRequest): 200 | 481 {
    const rack = parseRAck(request.headers.get('RAck'));
    const outstanding = this.#outstanding;
    if (outstanding === null || rack === null || rack.rseq !== outstanding.rseq || rack.cseq !== this.#inviteCseq || rack.method !== 'INVITE') return 481;
    this.#cancelTimers();
    this.#outstanding = null;
    const next = this.#waiting.shift();
    if (next !== undefined && !this.#stopped) this.#transmit(next);
    return 200;
  }

  /** The INVITE got its final response: nothing more is sent or retransmitted. */
  stop(): void {
    this.#stopped = true;
    this.#waiting.length = 0;
    this.#cancelTimers();
  }

  #cancelTimers(): void {
    this.#outstanding?.retransmit.cancel();
    this.#outstanding?.giveUp.cancel();
  }

  #transmit(response: SipResponse): void {
    const rseq = this.#nextRSeq++;
    response.headers.set('RSeq', String(rseq));
    this.#tx.respond(response);
    let interval = this.#t1;
    const retransmit = (): void => {
      this.#tx.respond(response);
      interval *= 2;
      if (this.#outstanding) this.#outstanding.retransmit = this.#clock.setTimeout(retransmit, interval);
    };
    const giveUp = (): void => {
      this.stop();
      this.#outstanding = null;
      this.#onTimeout();
    };
    this.#outstanding = { rseq, retransmit: this.#clock.setTimeout(retransmit, interval), giveUp: this.#clock.setTimeout(giveUp, 64 * this.#t1) };
  }
}
