/** @module The UAS's retransmission of its 2xx to an INVITE until the ACK arrives (RFC 3261 §13.3.1.4). */
import type { Clock, TimerHandle } from '../../../common/clock.js';
import type { SipResponse } from '../messages/sip-message.js';
import type { TimerSettings } from '../transactions/timers.js';

/** Where the 2xx is re-sent: the INVITE server transaction (it passes 2xx through, RFC 6026 §7.1). */
export interface ResponseSender {
  respond(response: SipResponse): void;
}

/** A 2xx waiting for its ACK. */
export interface Pending2xx {
  /** CSeq number of the INVITE (the ACK carries the same one). */
  readonly cseq: number;
  /** Stops the retransmissions (the ACK arrived, or the dialog ended). */
  cancel(): void;
}

/**
 * §13.3.1.4: the 2xx is passed to the transport again at T1, then at intervals doubling up to T2,
 * until the ACK arrives; with no ACK 64*T1 after the first send, `onTimeout` runs (the dialog then
 * ends with BYE). The first send is the caller's.
 */
export function retransmit2xxUntilAck(clock: Clock, timers: Pick<TimerSettings, 'T1' | 'T2'>, response: SipResponse, tx: ResponseSender, onTimeout: () => void): Pending2xx {
  const { T1, T2 } = timers;
  let interval = T1;
  let elapsed = 0;
  let live = true;
  let timer: TimerHandle | undefined;
  const tick = (): void => {
    if (!live) return;
    elapsed += interval;
    if (elapsed >= 64 * T1) {
      live = false;
      onTimeout();
      return;
    }
    tx.respond(response);
    interval = Math.min(2 * interval, T2);
    timer = clock.setTimeout(tick, interval);
  };
  timer = clock.setTimeout(tick, interval);
  return {
    cseq: response.cseq.seq,
    cancel: () => {
      live = false;
      timer?.cancel();
    },
  };
}
