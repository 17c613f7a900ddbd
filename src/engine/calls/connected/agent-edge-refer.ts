/**
 * @module RFC 3515: a REFER on a sip_trunk agent's leg asks for the caller to be transferred (the
 * platforms' "transfer to a human"). It is screened before the 202 (a refusal sends no NOTIFY),
 * then runs as the call's transfer, its outcome reported in the NOTIFY sipfrag; the transfer
 * releases the leg, whose BYE waits for that NOTIFY's answer (RFC 5589 §6).
 */
import type { Clock } from '../../../common/clock.js';
import type { SessionDialog } from '../../sip/index.js';
import type { AgentAsks } from './agent-transfer.js';

/** Longest the agent leg's BYE waits for the answer to the NOTIFY reporting its transfer. */
const REFER_REPORT_WAIT_MS = 2_000;

export class AgentEdgeRefer {
  readonly #clock: Clock;
  /** The NOTIFY telling the agent how its REFER went. */
  #reported: Promise<void> = Promise.resolve();

  constructor(clock: Clock, dialog: SessionDialog, asks: AgentAsks) {
    this.#clock = clock;
    dialog.referScreen = (referTo) => asks.screenTransfer(referTo);
    dialog.events.on('refer', (referTo, notifier) => asks.transfer(referTo, (status, reason) => {
      this.#reported = notifier.notify(status, reason);
    }));
  }

  /** The REFER's final NOTIFY answered, or a short while passed: the agent hears the outcome before the BYE. */
  reported(): Promise<void> {
    return new Promise((resolve) => {
      const timer = this.#clock.setTimeout(resolve, REFER_REPORT_WAIT_MS);
      void this.#reported.then(() => {
        timer.cancel();
        resolve();
      });
    });
  }
}
