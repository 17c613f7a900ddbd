/**
 * @module Offers from the called party in an early dialog of our INVITE (RFC 3311 §5.1 with RFC
 * 3262): once its reliable 18x answered our offer and we PRACKed it, the far end may send UPDATE
 * with a new offer before the 2xx (a carrier moving its early media, a platform changing codec).
 * The early session answers from the same RTP port and the codecs we offered, and the call takes
 * the audio so agreed (docs/DECISIONS.md, "Offers in early dialogs"). Whether an offer may come at
 * all (491 while ours is unanswered, 500 while theirs is, RFC 3311 §5.2) is the SIP layer's rule.
 */
import { createAnswer, isSdpRejection, type LocalCapabilities, type NegotiatedAudio } from '../../media/index.js';
import type { OutboundCall, SessionDialog } from '../../sip/index.js';

/** Answers the UPDATE offers of every early dialog (fork) of an outgoing INVITE. */
export class EarlyOffers {
  /** Our capabilities; its `sessionVersion` grows with every answer (RFC 3264 §8). */
  readonly caps: LocalCapabilities;
  readonly #apply: (audio: NegotiatedAudio) => void;
  /** The audio agreed in each early dialog by its last UPDATE exchange. */
  readonly #audio = new Map<SessionDialog, NegotiatedAudio>();

  /**
   * `caps` is the call's own object (its version goes on growing on the confirmed leg); `apply`
   * points the media at the new far end as soon as the answer goes out.
   */
  constructor(caps: LocalCapabilities, apply: (audio: NegotiatedAudio) => void) {
    this.caps = caps;
    this.#apply = apply;
  }

  /** Answers offers in each early dialog `attempt` creates. */
  watch(attempt: OutboundCall): void {
    attempt.events.on('early', (session) => {
      session.onOffer = (offer) => this.#answer(session, offer);
    });
  }

  /**
   * The audio the early dialog that became `session` last agreed by UPDATE, if any. The 2xx then
   * carries no new answer (no offer is outstanding, RFC 6337 §3.1.1), so this is the call's audio.
   */
  agreedIn(session: SessionDialog): NegotiatedAudio | undefined {
    return this.#audio.get(session);
  }

  #answer(session: SessionDialog, offer: Buffer): Buffer | undefined {
    // An UPDATE offer always has a body (RFC 3311 §5.2: one without is a refresh, answered below us).
    this.caps.sessionVersion += 1;
    const result = createAnswer(offer.toString('utf8'), this.caps);
    if (isSdpRejection(result)) return undefined;
    this.#audio.set(session, result.negotiated);
    this.#apply(result.negotiated);
    return Buffer.from(result.sdp);
  }
}
