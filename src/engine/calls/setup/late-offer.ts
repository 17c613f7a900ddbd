/**
 * @module An INVITE without a body (a "delayed" or "late" offer, common on carrier trunks) asks
 * us for the offer: it goes in our 2xx and the caller's answer comes back in the ACK (RFC 3261
 * 13.2.1 and 13.3.1.4, RFC 3264 section 4). The same holds for a re-INVITE without a body (RFC
 * 3261 14.2). This is the wait for that answer.
 */
import { isSdpRejection, processAnswer, type LocalCapabilities, type NegotiatedAudio } from '../../media/index.js';
import type { SessionDialog, SessionEndReason } from '../../sip/index.js';

/** What the ACK brought: a usable answer, an answer we cannot use, or no ACK (the session ended). */
export type AckAnswer =
  | { kind: 'answer'; audio: NegotiatedAudio }
  | { kind: 'unusable'; detail: string }
  | { kind: 'gone'; reason: SessionEndReason };

/**
 * Resolves with the answer in the ACK to the 2xx that carried our offer `caps`. An ACK without
 * a body, or with SDP that does not answer our offer, is `unusable`: the session cannot carry
 * media, and the caller of this function ends it. No ACK within 64*T1 ends the session with BYE
 * (13.3.1.4), which resolves as `gone`.
 */
export function answerFromAck(session: SessionDialog, caps: LocalCapabilities): Promise<AckAnswer> {
  return new Promise((resolve) => {
    const stops: (() => void)[] = [];
    const settle = (outcome: AckAnswer): void => {
      for (const stop of stops) stop();
      resolve(outcome);
    };
    stops.push(session.events.on('ack', (ack) => {
      if (ack.body.length === 0) return settle({ kind: 'unusable', detail: 'the ACK carries no answer to our offer' });
      const audio = processAnswer(ack.body.toString('utf8'), caps);
      settle(isSdpRejection(audio) ? { kind: 'unusable', detail: audio.detail } : { kind: 'answer', audio });
    }));
    stops.push(session.events.on('terminated', (reason) => settle({ kind: 'gone', reason })));
  });
}
