/** @module NOTIFY message/sipfrag progress reports for an accepted REFER (RFC 3515 §2.4.4, §2.4.5). */

/** Sends the implicit subscription's NOTIFYs; the last one (final status) terminates it. */
export class ReferNotifier {
  readonly #send: (sipfrag: string, terminated: boolean) => Promise<void>;
  /** CSeq of the REFER, kept so a notifier can be tied to its request in logs. */
  readonly referCseq: number;
  #terminated = false;

  constructor(send: (sipfrag: string, terminated: boolean) => Promise<void>, referCseq: number) {
    this.#send = send;
    this.referCseq = referCseq;
  }

  get isTerminated(): boolean {
    return this.#terminated;
  }

  /**
   * Reports the status of the referred request as `SIP/2.0 <status> <reason>`. A final status
   * (200 and up) ends the subscription (Subscription-State: terminated). Resolves once the NOTIFY
   * is answered (or failed); never rejects.
   */
  notify(status: number, reason: string): Promise<void> {
    if (this.#terminated) return Promise.resolve();
    const final = status >= 200;
    if (final) this.#terminated = true;
    return this.#send(`SIP/2.0 ${status} ${reason}\r\n`, final).catch(() => undefined);
  }
}
