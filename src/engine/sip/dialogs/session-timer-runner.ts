/** @module Runs the RFC 4028 session timer of one dialog: refresh at half the interval, or BYE at expiry. */
import type { Clock, TimerHandle } from '../../../common/clock.js';
import type { SipRequest, SipResponse } from '../messages/sip-message.js';
import { expireAfterMs, formatSessionExpires, parseSessionExpires, refreshAfterMs, type Refresher } from './session-timer.js';

/** Timer actions supplied by the session dialog. */
export interface SessionTimerActions {
  refresh(): void;
  expire(): void;
}

/** One dialog's session timer; `role` is our role in the dialog (uac or uas). */
export class SessionTimer {
  readonly #clock: Clock;
  readonly #role: Refresher;
  readonly #actions: SessionTimerActions;
  #current: { deltaSeconds: number; refresher: Refresher } | undefined;
  #timer: TimerHandle | undefined;

  constructor(clock: Clock, role: Refresher, actions: SessionTimerActions) {
    this.#clock = clock;
    this.#role = role;
    this.#actions = actions;
  }

  /** Starts (or restarts) the timer for an interval; we refresh when the refresher is our role. */
  arm(se: { deltaSeconds: number; refresher: Refresher }): void {
    this.stop();
    this.#current = se;
    const ours = se.refresher === this.#role;
    this.#timer = this.#clock.setTimeout(
      () => (ours ? this.#actions.refresh() : this.#actions.expire()),
      ours ? refreshAfterMs(se.deltaSeconds) : expireAfterMs(se.deltaSeconds),
    );
  }

  stop(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
  }

  /**
   * RFC 4028 §9: an incoming re-INVITE or UPDATE refreshes the session; returns the
   * Session-Expires value for our 2xx, or undefined when the session has no timer.
   */
  onRefreshRequest(request: SipRequest): string | undefined {
    const asked = parseSessionExpires(request.headers.get('Session-Expires'));
    const base = asked ?? (this.#current ? { deltaSeconds: this.#current.deltaSeconds } : undefined);
    if (!base) return undefined;
    // In the 2xx, refresher roles are relative to this transaction: the requester is the uac.
    const refresher: Refresher = asked?.refresher ?? 'uac';
    const dialogRefresher: Refresher = refresher === 'uac' ? (this.#role === 'uac' ? 'uas' : 'uac') : this.#role;
    this.arm({ deltaSeconds: base.deltaSeconds, refresher: dialogRefresher });
    return formatSessionExpires({ deltaSeconds: base.deltaSeconds, refresher });
  }

  /** Headers for a refresh we send: we stay the refresher (we are the uac of this transaction). */
  refreshHeaders(): [string, string][] {
    if (!this.#current) return [];
    return [['Session-Expires', formatSessionExpires({ deltaSeconds: this.#current.deltaSeconds, refresher: 'uac' })], ['Supported', 'timer']];
  }

  /** A 2xx to our refresh re-arms the timer with what the far end granted. */
  onRefreshResponse(response: SipResponse): void {
    const se = parseSessionExpires(response.headers.get('Session-Expires'));
    if (!se && !this.#current) return;
    const delta = se?.deltaSeconds ?? this.#current?.deltaSeconds ?? 0;
    const refresher: Refresher = (se?.refresher ?? 'uac') === 'uac' ? this.#role : (this.#role === 'uac' ? 'uas' : 'uac');
    this.arm({ deltaSeconds: delta, refresher });
  }
}
