/**
 * @module Digits toward the caller of a sip_trunk call (docs/API.md "Digits toward the callee"):
 * those asked for by the API, and the agent edge's own where the bridge cannot pass them on as
 * they came (its RFC 4733 events to a caller leg without telephone-event, its SIP INFO). They go
 * as the carrier takes digits: SIP INFO on the caller's dialog with `dtmf: info`, otherwise
 * RFC 4733 events when the caller's leg negotiated telephone-event and in-band tones when not,
 * played on the caller's RTP while the agent's audio toward the caller is muted.
 */
import type { Clock } from '../../../common/clock.js';
import type { Logger } from '../../../common/logger.js';
import { dtmfFromInfo, encodeG711, FramePacer, RTP_HEADER_SIZE, writeRtpHeader, type NegotiatedAudio, type RtpSession } from '../../media/index.js';
import type { SessionDialog } from '../../sip/index.js';
import { CalleeDigits } from './agent-media/callee-digits.js';
import { DigitsByInfo } from './digits-by-info.js';

const FRAME_MS = 20;
const FRAME_SAMPLES = 160;
/** Sequencer source key of the digits this plays (CarrierPlayout's is -1000; media's own are -1 and below -2). */
const DIGITS_SOURCE = -1001;

export interface TrunkDigitsOptions {
  clock: Clock;
  log: Logger;
  /** The caller's leg: its RTP, its dialog, and its audio now (a re-offer may change it). */
  rtp: RtpSession;
  dialog: Pick<SessionDialog, 'info'>;
  /** The agent edge's dialog, whose INFO keys (answered 200 by the dialog) go on to the caller. */
  agentDialog: SessionDialog | null;
  audio: () => NegotiatedAudio;
  /** Mutes the agent's audio and events toward the caller while digits play, so they do not interleave. */
  muteAgent: (muted: boolean) => void;
  /** While true (the call on hold), the digits wait. */
  isHeld: () => boolean;
  /** The carrier's `dtmf` (docs/CONFIGURATION.md "Digits toward the callee"). */
  dtmf: 'auto' | 'info';
}

export class TrunkDigits {
  readonly #o: TrunkDigitsOptions;
  readonly #byInfo: DigitsByInfo | null;
  readonly #queue = new CalleeDigits();
  readonly #pacer: FramePacer;
  readonly #pcm = new Int16Array(FRAME_SAMPLES);
  #seq = 0;
  #ts = 0;
  /** RFC 4733 §2.5.1.1: every packet of an event carries its start's timestamp. */
  #eventTs = 0;
  #stopped = false;

  constructor(options: TrunkDigitsOptions) {
    this.#o = options;
    this.#byInfo = options.dtmf === 'info' ? new DigitsByInfo(options.clock, options.dialog, options.log) : null;
    this.#pacer = new FramePacer(options.clock, FRAME_MS, () => this.#onFrame());
    options.agentDialog?.events.on('info', (info) => {
      const digit = dtmfFromInfo(info.headers.get('Content-Type'), info.body);
      if (digit === null) return;
      options.log.debug({ digit }, 'DTMF from the agent edge by SIP INFO');
      this.send(digit);
    });
  }

  /**
   * An RFC 4733 key the agent edge sent: the bridge relays it as an event where the caller's leg
   * negotiated telephone-event; otherwise it is played to the caller as the carrier takes digits.
   */
  agentEvent(digit: string): void {
    if (this.#o.audio().telephoneEvent !== null) return;
    this.#o.log.debug({ digit }, 'DTMF from the agent edge by RFC 4733, made again toward the caller');
    this.send(digit);
  }

  /** Plays `digits` (keys and `w` pauses) after those queued before; `onSent` once the last is out. */
  send(digits: string, onSent: () => void = () => undefined): void {
    if (this.#stopped) return;
    if (this.#byInfo) return this.#byInfo.send(digits, onSent);
    const audio = this.#o.audio();
    const events = audio.telephoneEvent !== null;
    if (!events && audio.codec.encoding !== 'PCMU' && audio.codec.encoding !== 'PCMA') {
      // Tones are made in G.711; a caller on another codec without telephone-event gets none.
      this.#o.log.warn({ codec: audio.codec.encoding }, 'digits toward the caller dropped: no telephone-event and no G.711 on its leg');
      return;
    }
    this.#queue.enqueue(digits, events, onSent);
    if (this.#pacer.running) return;
    this.#o.muteAgent(true);
    this.#pacer.start();
  }

  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#byInfo?.stop();
    this.#queue.clear();
    if (this.#pacer.running) {
      this.#pacer.stop();
      this.#o.muteAgent(false);
    }
  }

  /** Every 20 ms while digits wait: one frame of them (a tone, silence or an RFC 4733 packet); none while held. */
  #onFrame(): void {
    if (!this.#queue.active) {
      this.#pacer.stop();
      this.#o.muteAgent(false);
      return;
    }
    if (this.#o.isHeld()) return;
    const audio = this.#o.audio();
    const frame = this.#queue.next(this.#pcm);
    if (frame.kind === 'event') {
      if (frame.first) this.#eventTs = this.#ts;
      const packet = Buffer.allocUnsafe(RTP_HEADER_SIZE + frame.payload.length);
      writeRtpHeader(packet, audio.telephoneEvent?.payloadType ?? 101, this.#seq, this.#eventTs, 0, frame.marker);
      frame.payload.copy(packet, RTP_HEADER_SIZE);
      this.#advance();
      // Only an event's start moves the stream's clock: its updates repeat the start's timestamp.
      this.#o.rtp.send(packet, DIGITS_SOURCE, frame.first);
      return;
    }
    const encoding = audio.codec.encoding === 'PCMA' ? 'PCMA' : 'PCMU';
    const packet = Buffer.allocUnsafe(RTP_HEADER_SIZE + FRAME_SAMPLES);
    writeRtpHeader(packet, audio.codec.payloadType, this.#seq, this.#ts, 0, false);
    encodeG711(encoding, this.#pcm, packet.subarray(RTP_HEADER_SIZE));
    this.#advance();
    this.#o.rtp.send(packet, DIGITS_SOURCE);
  }

  #advance(): void {
    this.#seq = (this.#seq + 1) & 0xffff;
    this.#ts = (this.#ts + FRAME_SAMPLES) >>> 0;
  }
}
