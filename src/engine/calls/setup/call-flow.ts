/**
 * @module What every call flow shares: before the answer it is setting up (its own way to stop),
 * after it a ConnectedCall takes the commands. Outbound and inbound flows fill in the setup.
 */
import type { Call } from '../call.js';
import type { CallCommandFailure } from '../call-control.js';
import type { LiveCall } from '../call-registry.js';
import type { ConnectedCall } from '../connected/connected-call.js';
import type { EndReason } from '../ending/end-reason.js';
import type { CallSessionSnapshot, SetupSessionSnapshot } from '../session-snapshot.js';

const NOT_ACTIVE: CallCommandFailure = { error: 'call_not_active' };

export abstract class CallFlow implements LiveCall {
  readonly call: Call;
  /** The answered call, once there is one. */
  protected connected: ConnectedCall | null = null;
  readonly #ended: Promise<void>;

  constructor(call: Call) {
    this.call = call;
    this.#ended = new Promise((resolve) => call.onEnd(() => resolve()));
  }

  /** Sets the call up and connects it; resolves once connected or ended. Never rejects. */
  async run(): Promise<void> {
    try {
      await this.proceed();
    } catch (err) {
      this.call.log.error({ err }, 'call failed unexpectedly');
      const reason: EndReason = { reason: 'failed', sipStatus: null, hangupBy: 'gateway' };
      if (this.connected) await this.connected.end(reason, true);
      else this.failBeforeAnswer(reason);
    }
  }

  hold(): CallCommandFailure | null {
    return this.connected ? this.connected.hold() : NOT_ACTIVE;
  }

  unhold(): CallCommandFailure | null {
    return this.connected ? this.connected.unhold() : NOT_ACTIVE;
  }

  transfer(to: string): CallCommandFailure | null {
    return this.connected ? this.connected.transfer(to) : NOT_ACTIVE;
  }

  sendDigits(digits: string): CallCommandFailure | null {
    return this.connected ? this.connected.sendDigits(digits) : NOT_ACTIVE;
  }

  hangup(): Promise<void> {
    return this.#stop({ reason: 'completed', sipStatus: null, hangupBy: 'api' });
  }

  shutdown(): Promise<void> {
    return this.#stop({ reason: 'gateway_shutdown', sipStatus: null, hangupBy: 'gateway' });
  }

  session(): CallSessionSnapshot {
    return this.connected ? this.connected.session() : { phase: 'setup', ...this.setupSession() };
  }

  /** Resolves once the legs are torn down (BYE answered or given up), not only recorded as ended. */
  #stop(reason: EndReason): Promise<void> {
    if (this.connected) return this.connected.end(reason, true);
    if (!this.call.isEnded) this.stopBeforeAnswer(reason);
    return this.#ended;
  }

  /** The flow's setup up to a connected call. */
  protected abstract proceed(): Promise<void>;
  /** A hang-up or shutdown before the answer (CANCEL, or refusing the caller's INVITE). */
  protected abstract stopBeforeAnswer(reason: EndReason): void;
  /** Ends the call before the answer for a bug in the flow. */
  protected abstract failBeforeAnswer(reason: EndReason): void;
  /** What the session view shows while setting up. */
  protected abstract setupSession(): Omit<SetupSessionSnapshot, 'phase'>;
}
