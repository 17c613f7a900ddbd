/** @module The keys the carrier party presses, as its leg carries them: RFC 4733 events or in-band tones (ITU-T Q.24). */
import {
  dtmfDigit, GoertzelDtmfDetector, parseTelephoneEvent, rtpPayloadOffset, rtpTimestamp, TelephoneEventReceiver,
} from '../../../media/index.js';

/**
 * Turns the carrier leg's key signalling into digits, each reported once. A leg that negotiated
 * telephone-event sends RFC 4733 packets; one that did not can only send its keys as tones in the
 * audio, so only then does the Goertzel detector listen (under 2 µs per 20 ms frame).
 * Keys sent by SIP INFO arrive through signalling and never pass here.
 */
export class CallerKeys {
  readonly #events = new TelephoneEventReceiver();
  readonly #tones: GoertzelDtmfDetector | null;
  readonly #onKey: (digit: string) => void;

  constructor(hasTelephoneEvent: boolean, onKey: (digit: string) => void) {
    this.#tones = hasTelephoneEvent ? null : new GoertzelDtmfDetector();
    this.#onKey = onKey;
  }

  /** True when keys are detected in the audio, i.e. the leg has no telephone-event. */
  get listensForTones(): boolean {
    return this.#tones !== null;
  }

  /**
   * An RTP packet of the telephone-event payload type. RFC 4733 §2.5.1.4: the end packet is sent
   * three times; the receiver reports each event once. False when the payload is malformed.
   */
  receiveEvent(packet: Buffer): boolean {
    const offset = rtpPayloadOffset(packet);
    const event = offset < 0 ? null : parseTelephoneEvent(packet, offset);
    if (event === null) return false;
    for (const done of this.#events.receive(rtpTimestamp(packet), event)) {
      const digit = dtmfDigit(done.event);
      if (digit !== null) this.#onKey(digit);
    }
    return true;
  }

  /** The caller's decoded audio, frame by frame; a no-op on legs with telephone-event. */
  listen(pcm: Int16Array): void {
    const digit = this.#tones?.process(pcm) ?? null;
    if (digit !== null) this.#onKey(digit);
  }
}
