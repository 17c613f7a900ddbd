/**
 * @module One call at the sandbox far end: ringing, the reserved-number failures, the answer,
 * re-INVITEs, the call limit and the teardown that leaves no timer or port behind.
 */
import type { Clock, TimerHandle } from '../../../common/clock.js';
import type { Logger } from '../../../common/logger.js';
import type { PortsExhausted } from '../../media/index.js';
import type { InboundCall, SessionDialog, SipRequest } from '../../sip/index.js';
import type { SandboxBehaviour } from './reserved-numbers.js';
import { nextSandboxCallState, type SandboxCallEvent, type SandboxCallState } from './sandbox-call-state.js';
import { checkOffer, type SandboxMedia } from './sandbox-media.js';

/**
 * RFC 3261 §13.3.1.1: a UAS that has not answered sends a non-100 provisional response every
 * minute, so that proxies on the way do not give up on the transaction.
 */
const PROVISIONAL_REFRESH_MS = 60_000;

/** What a call needs from the far end. */
export interface SandboxCallOptions {
  call: InboundCall;
  behaviour: SandboxBehaviour;
  clock: Clock;
  host: string;
  ringMs: number;
  maxCallMs: number;
  openMedia: () => Promise<SandboxMedia | PortsExhausted>;
  /** The call is over and holds nothing any more. */
  onEnded: (call: SandboxCall) => void;
  logger?: Logger;
}

/** One inbound call to the sandbox carrier. */
export class SandboxCall {
  readonly #o: SandboxCallOptions;
  #state: SandboxCallState = 'ringing';
  #ringTimer: TimerHandle | null = null;
  #refreshTimer: TimerHandle | null = null;
  #limitTimer: TimerHandle | null = null;
  #media: SandboxMedia | null = null;
  #session: SessionDialog | null = null;

  constructor(options: SandboxCallOptions) {
    this.#o = options;
  }

  get state(): SandboxCallState {
    return this.#state;
  }

  get callId(): string {
    return this.#o.call.callId;
  }

  /** Starts handling the INVITE: an immediate failure, or 180 Ringing and the ring timer. */
  begin(): void {
    const { call, behaviour } = this.#o;
    if (behaviour.kind === 'reject') return this.#reject(behaviour.status);
    if (call.offer.length > 0) {
      const rejection = checkOffer(call.offer.toString('utf8'), this.#o.host);
      // RFC 3261 §21.4.26: an offer we cannot use is 488 Not Acceptable Here.
      if (rejection) return this.#reject(488, rejection.detail);
    }
    call.events.on('cancel', () => this.#guard(() => this.#end()));
    call.progress(180);
    this.#refreshProvisional();
    switch (behaviour.kind) {
      case 'answer':
        this.#ringTimer = this.#o.clock.setTimeout(() => this.#guard(() => this.#answer()), this.#o.ringMs);
        return;
      case 'ring-then-reject':
        this.#ringTimer = this.#o.clock.setTimeout(() => this.#guard(() => this.#reject(behaviour.status)), this.#o.ringMs);
        return;
      case 'ring-forever':
        // The caller is expected to CANCEL; the call limit still bounds what it can hold.
        this.#ringTimer = this.#o.clock.setTimeout(() => this.#guard(() => this.#reject(480)), this.#o.maxCallMs);
        return;
    }
  }

  /** Ends the call for a shutdown: 503 before the answer (RFC 3261 §21.5.4), BYE after it. */
  async hangUp(): Promise<void> {
    if (this.#state === 'ringing' || this.#state === 'answering') {
      this.#o.call.reject(503);
      return this.#end();
    }
    await this.#bye();
  }

  /** A state check the compiler does not narrow across an await (other events change the state). */
  #isIn(state: SandboxCallState): boolean {
    return this.#state === state;
  }

  #transition(event: SandboxCallEvent): void {
    this.#state = nextSandboxCallState(this.#state, event);
  }

  #refreshProvisional(): void {
    this.#refreshTimer = this.#o.clock.setTimeout(() => this.#guard(() => {
      if (this.#state !== 'ringing') return;
      this.#o.call.progress(180);
      this.#refreshProvisional();
    }), PROVISIONAL_REFRESH_MS);
  }

  #reject(status: number, detail?: string): void {
    if (this.#state === 'ended') return;
    this.#o.logger?.debug({ callId: this.callId, status, detail }, 'sandbox call rejected');
    this.#o.call.reject(status);
    this.#end();
  }

  async #answer(): Promise<void> {
    if (this.#state !== 'ringing') return;
    this.#transition('ring-time-over');
    this.#refreshTimer?.cancel();
    const media = await this.#o.openMedia();
    if ('error' in media) return this.#rejectAnswering(503);
    // The caller may have cancelled while the ports were being bound.
    if (!this.#isIn('answering')) return media.close();
    this.#media = media;
    const { call } = this.#o;
    const lateOffer = call.offer.length === 0;
    const sdp = lateOffer ? media.offer() : media.answer(call.offer.toString('utf8'));
    if (typeof sdp !== 'string') return this.#rejectAnswering(488);
    const session = call.accept(Buffer.from(sdp));
    if (!session) return this.#end();
    this.#transition('answered');
    this.#session = session;
    session.onOffer = (offer) => this.#onReoffer(offer);
    session.events.on('ack', (ack) => this.#guard(() => this.#onAck(ack)));
    session.events.on('terminated', () => this.#guard(() => this.#end()));
    this.#limitTimer = this.#o.clock.setTimeout(() => this.#guard(() => this.#bye()), this.#o.maxCallMs);
    if (!lateOffer) media.start();
  }

  /** A final failure once the ring time is over (the call is no longer 'ringing'). */
  #rejectAnswering(status: number): void {
    this.#o.call.reject(status);
    this.#end();
  }

  /** RFC 3264 §8: a re-INVITE or UPDATE offer (hold, resume, a new address after a transfer). */
  #onReoffer(offer: Buffer): Buffer | undefined {
    const media = this.#media;
    if (!media || this.#state !== 'active') return undefined;
    // RFC 3261 §14.2: a re-INVITE without a body asks us for an offer; the answer is in the ACK.
    if (offer.length === 0) return Buffer.from(media.offer());
    const answer = media.answer(offer.toString('utf8'));
    return typeof answer === 'string' ? Buffer.from(answer) : undefined;
  }

  async #onAck(ack: SipRequest): Promise<void> {
    const media = this.#media;
    if (!media?.awaitingAnswer) return;
    // RFC 3264 §4: our offer in the 2xx needs the answer in the ACK; without a usable one the
    // session cannot work, so it ends with BYE.
    if (media.applyAnswer(ack.body.toString('utf8'))) {
      media.start();
      return;
    }
    await this.#bye();
  }

  /** The call limit, or an unusable answer: BYE goes out before the media is released. */
  async #bye(): Promise<void> {
    const session = this.#session;
    try {
      if (session && !session.isEnded) await session.bye();
    } finally {
      this.#end();
    }
  }

  /** Idempotent: clears the timers, releases the ports and tells the far end. */
  #end(): void {
    if (this.#state === 'ended') return;
    this.#transition('ended');
    this.#ringTimer?.cancel();
    this.#refreshTimer?.cancel();
    this.#limitTimer?.cancel();
    this.#media?.close();
    this.#o.onEnded(this);
  }

  /**
   * Runs a timer or event callback so that nothing escapes it: a failure (a bug) is logged and
   * ends the call, with 500 before the answer and BYE after it.
   */
  #guard(work: () => void | Promise<void>): void {
    const fail = (err: unknown): void => {
      this.#o.logger?.error({ err, callId: this.callId }, 'sandbox call failed');
      try {
        if (this.#state === 'answering' || this.#state === 'ringing') this.#o.call.reject(500);
        const session = this.#session;
        if (session && !session.isEnded) {
          session.bye().catch((byeErr: unknown) => this.#o.logger?.warn({ err: byeErr, callId: this.callId }, 'sandbox call: BYE could not be sent'));
        }
      } finally {
        this.#end();
      }
    };
    try {
      work()?.catch(fail);
    } catch (err) {
      fail(err);
    }
  }
}
