/**
 * @module `machine_detection: hold_until_result` (docs/API.md "Answering-machine detection"): the
 * callee's RTP is taken from the remote leg before any agent is reached, decoded and run through
 * the detector, and the agent side learns what to do: connect the agent (a person, or nothing heard
 * in time), hang up (a machine or fax with `on_machine: hangup`) or connect a machine, at once or,
 * with `wait_for_beep`, after its beep or the end of its greeting. The callee hears nothing meanwhile.
 */
import type { Clock, TimerHandle } from '../../../../common/clock.js';
import {
  decodeG711, rtpPaddingSize, rtpPayloadOffset,
  type AmdDecision, type AmdThresholds, type NegotiatedAudio, type ReleaseSession, type RtpSession,
} from '../../../media/index.js';
import { CallAmd } from './call-amd.js';

/** What the agent side does once the hold ends; `released` when the call went first (hang-up, transfer). */
export type AmdHoldOutcome = { action: 'connect' | 'hangup'; decision: AmdDecision } | { action: 'released' };

/** How long a machine connected with `wait_for_beep` is listened to (docs/CONFIGURATION.md "Answering-machine detection"). */
export interface BeepWait {
  /** Silence after the decision that ends a greeting with no beep. */
  greetingEndSilenceMs: number;
  /** Longest wait for the beep or the greeting's end, from the decision; the machine is connected then. */
  maxBeepWaitMs: number;
}

export interface AmdHoldOptions {
  clock: Clock;
  rtp: RtpSession;
  audio: NegotiatedAudio;
  thresholds: Partial<AmdThresholds>;
  beepWait: BeepWait;
  onMachine: { action: 'hangup' | 'connect'; waitForBeep: boolean };
  /** The decision, and again when a beep dates itself after it: for the call and the agent. */
  onResult: (decision: AmdDecision) => void;
}

/** Largest carrier payload taken: 120 ms of G.711. */
const MAX_PAYLOAD_SAMPLES = 960;

export class AmdHold {
  readonly #o: AmdHoldOptions;
  readonly #pcm = new Int16Array(MAX_PAYLOAD_SAMPLES);
  #amd: CallAmd | null = null;
  #releaseRtp: ReleaseSession | null = null;
  #beepTimer: TimerHandle | null = null;
  #settle: ((outcome: AmdHoldOutcome) => void) | null = null;
  readonly outcome: Promise<AmdHoldOutcome>;

  constructor(options: AmdHoldOptions) {
    this.#o = options;
    this.outcome = new Promise((resolve) => { this.#settle = resolve; });
  }

  /** Starts listening; the detector's WASM VAD loads first. Rejects only when it cannot load. */
  async start(): Promise<void> {
    const amd = await CallAmd.start(this.#o.thresholds, (d) => this.#decided(d), (d) => this.#beep(d));
    if (this.#settle === null) {
      amd.close();
      return;
    }
    this.#amd = amd;
    const { audio } = this.#o;
    const codec = audio.codec.encoding === 'PCMA' ? 'PCMA' : 'PCMU';
    this.#releaseRtp = this.#o.rtp.take({
      onRtp: (packet) => {
        if ((packet[1]! & 0x7f) !== audio.receivePayloadType) return;
        const offset = rtpPayloadOffset(packet);
        const end = packet.length - rtpPaddingSize(packet);
        if (offset < 0 || end - offset > MAX_PAYLOAD_SAMPLES) return;
        amd.write(this.#pcm.subarray(0, decodeG711(codec, packet.subarray(offset, end), this.#pcm)));
      },
    });
  }

  /**
   * Ends the hold: the RTP goes back to the remote leg for the agent to take. The detector is
   * handed over (it still dates a later beep), or closed with `released`.
   */
  #finish(outcome: AmdHoldOutcome): void {
    const settle = this.#settle;
    if (settle === null) return;
    this.#settle = null;
    this.#beepTimer?.cancel();
    this.#releaseRtp?.();
    this.#releaseRtp = null;
    if (outcome.action !== 'connect') {
      this.#amd?.close();
      this.#amd = null;
    }
    settle(outcome);
  }

  /** The call ended or a transfer took the callee while the agent was held back. */
  cancel(): void {
    this.#finish({ action: 'released' });
  }

  /** The detector, for the agent side to keep feeding once the agent is connected (a later beep); null after a cancel or a hang-up. */
  takeDetector(): CallAmd | null {
    const amd = this.#amd;
    this.#amd = null;
    return amd;
  }

  #decided(decision: AmdDecision): void {
    this.#o.onResult(decision);
    // docs/DECISIONS.md "Answering-machine detection": unknown connects; a fax is a machine.
    if (decision.result === 'human' || decision.result === 'unknown') return this.#finish({ action: 'connect', decision });
    const { action, waitForBeep } = this.#o.onMachine;
    if (action === 'hangup') return this.#finish({ action: 'hangup', decision });
    if (!waitForBeep || decision.result === 'fax' || decision.beepAtMs !== null) return this.#finish({ action: 'connect', decision });
    this.#amd?.watchGreetingEnd(this.#o.beepWait.greetingEndSilenceMs, () => this.#finish({ action: 'connect', decision }));
    this.#beepTimer = this.#o.clock.setTimeout(() => this.#finish({ action: 'connect', decision }), this.#o.beepWait.maxBeepWaitMs);
  }

  #beep(decision: AmdDecision): void {
    this.#o.onResult(decision);
    this.#finish({ action: 'connect', decision });
  }
}
