/** @module RFC 3261 §17 timer values (Table 4 of Appendix A), derived from configurable T1, T2, T4. */

/** The three base intervals of RFC 3261 §17.1.1.1, in milliseconds. */
export interface TimerSettings {
  /** RTT estimate; default 500 ms. */
  readonly T1: number;
  /** Maximum retransmit interval for non-INVITE requests and INVITE responses; default 4 s. */
  readonly T2: number;
  /** Maximum duration a message will remain in the network; default 5 s. */
  readonly T4: number;
}

/** RFC 3261 Appendix A defaults. */
export const DEFAULT_TIMER_SETTINGS: TimerSettings = Object.freeze({ T1: 500, T2: 4000, T4: 5000 });

/** Every timer of RFC 3261 §17 (A to K) plus L and M of RFC 6026, for one transport kind. */
export interface TimerValues {
  readonly T1: number;
  readonly T2: number;
  readonly T4: number;
  /** INVITE request retransmit interval, UDP only (initial value; doubles). */
  readonly TIMER_A: number;
  /** INVITE transaction timeout. */
  readonly TIMER_B: number;
  /** Wait time for response retransmits in Completed (INVITE client): ≥32 s on UDP, 0 reliable. */
  readonly TIMER_D: number;
  /** Non-INVITE request retransmit interval, UDP only (initial value). */
  readonly TIMER_E: number;
  /** Non-INVITE transaction timeout. */
  readonly TIMER_F: number;
  /** INVITE final response retransmit interval (initial value). */
  readonly TIMER_G: number;
  /** Wait time for ACK receipt. */
  readonly TIMER_H: number;
  /** Wait time for ACK retransmits: T4 on UDP, 0 reliable. */
  readonly TIMER_I: number;
  /** Wait time for non-INVITE request retransmits: 64*T1 on UDP, 0 reliable. */
  readonly TIMER_J: number;
  /** Wait time for response retransmits (non-INVITE client): T4 on UDP, 0 reliable. */
  readonly TIMER_K: number;
  /** RFC 6026 §7.1: wait time for INVITE retransmissions in Accepted (server). */
  readonly TIMER_L: number;
  /** RFC 6026 §7.2: wait time for 2xx retransmissions in Accepted (client). */
  readonly TIMER_M: number;
}

/** RFC 3261 §17.1.1.2: Timer D "at least 32 seconds for unreliable transports". */
const TIMER_D_UNRELIABLE = 32_000;

/** The timer values for one transaction; `reliable` is true for TCP and TLS. */
export function timerValues(settings: TimerSettings, reliable: boolean): TimerValues {
  const { T1, T2, T4 } = settings;
  return {
    T1,
    T2,
    T4,
    TIMER_A: T1,
    TIMER_B: 64 * T1,
    TIMER_D: reliable ? 0 : Math.max(TIMER_D_UNRELIABLE, 64 * T1),
    TIMER_E: T1,
    TIMER_F: 64 * T1,
    TIMER_G: T1,
    TIMER_H: 64 * T1,
    TIMER_I: reliable ? 0 : T4,
    TIMER_J: reliable ? 0 : 64 * T1,
    TIMER_K: reliable ? 0 : T4,
    TIMER_L: 64 * T1,
    TIMER_M: 64 * T1,
  };
}
