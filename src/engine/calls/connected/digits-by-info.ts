/**
 * @module Digits toward the remote party by SIP INFO (docs/API.md "Digits toward the callee"), for
 * carriers configured with `dtmf: info`: one INFO per key with an `application/dtmf-relay` body,
 * each sent after the previous one was answered (RFC 6086 §4.2 leaves one INFO at a time to the
 * package; dtmf-relay peers expect them in order), and `w` waiting 500 ms.
 */
import type { Clock, TimerHandle } from '../../../common/clock.js';
import type { Logger } from '../../../common/logger.js';
import type { SessionDialog } from '../../sip/index.js';

/** How long a key lasts, as the body says (ms); what carriers' IVRs expect of a press. */
const KEY_MS = 100;
const PAUSE_MS = 500;

export class DigitsByInfo {
  readonly #clock: Clock;
  readonly #dialog: Pick<SessionDialog, 'info'>;
  readonly #log: Logger;
  /** The requests so far, one after the other. */
  #chain: Promise<void> = Promise.resolve();
  #stopped = false;
  #pause: TimerHandle | null = null;

  constructor(clock: Clock, dialog: Pick<SessionDialog, 'info'>, log: Logger) {
    this.#clock = clock;
    this.#dialog = dialog;
    this.#log = log;
  }

  /** Sends `digits` after those asked for before; `onSent` once the last INFO was answered. */
  send(digits: string, onSent: () => void): void {
    this.#chain = this.#chain.then(async () => {
      for (const ch of digits.toUpperCase()) {
        if (this.#stopped) return;
        if (ch === 'W') await this.#wait(PAUSE_MS);
        else {
          const status = await this.#dialog.info(Buffer.from(`Signal=${ch}\r\nDuration=${KEY_MS}\r\n`), 'application/dtmf-relay');
          if (status >= 300) this.#log.warn({ status, digit: ch }, 'the remote party refused a digit sent by SIP INFO');
        }
      }
      if (!this.#stopped) onSent();
    }).catch((err: unknown) => this.#log.warn({ err }, 'digits by SIP INFO could not be sent'));
  }

  /** Sends nothing more (the call ended or moved on). */
  stop(): void {
    this.#stopped = true;
    this.#pause?.cancel();
  }

  #wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.#pause = this.#clock.setTimeout(() => resolve(), ms);
    });
  }
}
