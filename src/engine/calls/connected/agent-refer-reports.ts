/**
 * @module The REFERs a sip_trunk agent sends on its leg (docs/API.md "Transfers asked by the
 * agent"): screened before the 202 (a refusal sends no NOTIFY, RFC 3515 2.4.2), then run as the
 * call's transfer with its progress reported in NOTIFY sipfrag (2.4.5). The leg's BYE waits for
 * the final NOTIFY's answer, so the agent learns the outcome first (RFC 5589 6).
 */
import type { Clock } from '../../../common/clock.js';
import type { SessionDialog } from '../../sip/index.js';
import type { AgentAsks } from './agent-transfer.js';

/** Longest the agent leg's BYE waits for the answer to the NOTIFY reporting its transfer. */
const REFER_REPORT_WAIT_MS = 2_000;

export class AgentReferReports {
  readonly #clock: Clock;
  readonly #ringTimeoutMs: number;
  /** The final NOTIFY of the last accepted REFER, answered (or failed). */
  #reported: Promise<void> = Promise.resolve();
  /** A REFER was accepted and its outcome is not reported yet. */
  #pending = false;

  constructor(clock: Clock, ringTimeoutMs: number) {
    this.#clock = clock;
    this.#ringTimeoutMs = ringTimeoutMs;
  }

  /** Takes the REFERs of the agent's leg: screened by `asks`, then started and reported. */
  accept(dialog: SessionDialog, asks: AgentAsks): void {
    dialog.referScreen = (referTo) => asks.screenTransfer(referTo);
    dialog.events.on('refer', (referTo, notifier) => {
      let reported: () => void = () => undefined;
      this.#reported = new Promise((resolve) => { reported = resolve; });
      this.#pending = true;
      void asks.transfer(referTo, (status, reason) => {
        const sent = notifier.notify(status, reason);
        if (status < 200) return;
        this.#pending = false;
        void sent.then(reported);
      });
    });
  }

  /**
   * The final NOTIFY answered, or a short while passed. A transfer the carrier runs (REFER to the
   * carrier) releases the agent's leg once the carrier accepts, before the outcome is known: the
   * wait then spans the carrier's ringing too, so the outcome still reaches the agent.
   */
  reported(): Promise<void> {
    const waitMs = this.#pending ? this.#ringTimeoutMs + REFER_REPORT_WAIT_MS : REFER_REPORT_WAIT_MS;
    return new Promise((resolve) => {
      const timer = this.#clock.setTimeout(resolve, waitMs);
      void this.#reported.then(() => {
        timer.cancel();
        resolve();
      });
    });
  }
}
