/** @module One side of a bridge: its RTP session, codec and payload types, plus the G.711 helpers it needs. */
import { alawDecode, alawEncode, alawToLinear, linearToAlaw, linearToUlaw, ulawDecode, ulawEncode, ulawToLinear } from '../codecs/g711.js';
import type { RtpSession } from '../rtp/rtp-session.js';
import type { NegotiatedAudio } from '../sdp/offer-answer.js';
import type { EncodingName } from '../sdp/codecs.js';

/** Audio encodings the bridge carries; G.722 is relayed but neither decoded nor transcoded. */
export type LegEncoding = Exclude<EncodingName, 'telephone-event'>;

/** How one leg is wired: negotiated once, then fixed until {@link MediaBridge.replaceLeg}. */
export interface BridgeLegConfig {
  session: RtpSession;
  encoding: LegEncoding;
  /** Payload type we send audio with (the far end's number) and the one it sends us. */
  sendPayloadType: number;
  receivePayloadType: number;
  /** RFC 4733 payload types, or null when telephone-event was not negotiated on this leg. */
  sendEventPayloadType: number | null;
  receiveEventPayloadType: number | null;
  /** Run the Goertzel detector on this leg's audio (for carriers that send DTMF in-band). */
  detectInbandDtmf?: boolean;
}

/** Builds a leg's configuration from the outcome of its offer/answer. */
export function bridgeLegOf(session: RtpSession, negotiated: NegotiatedAudio, options: { detectInbandDtmf?: boolean } = {}): BridgeLegConfig {
  const encoding = negotiated.codec.encoding;
  if (encoding === 'telephone-event') throw new RangeError('telephone-event is not an audio codec');
  return {
    session,
    encoding,
    sendPayloadType: negotiated.codec.payloadType,
    receivePayloadType: negotiated.receivePayloadType,
    sendEventPayloadType: negotiated.telephoneEvent?.payloadType ?? null,
    receiveEventPayloadType: negotiated.receiveTelephoneEventPayloadType,
    detectInbandDtmf: options.detectInbandDtmf ?? false,
  };
}

/** True for the encodings the bridge can decode to PCM (for taps, detection and transcoding). */
export function isG711(encoding: LegEncoding): encoding is 'PCMU' | 'PCMA' {
  return encoding === 'PCMU' || encoding === 'PCMA';
}

/** Whether audio can flow between the two encodings: equal, or both G.711. */
export function canBridge(a: LegEncoding, b: LegEncoding): boolean {
  return a === b || (isG711(a) && isG711(b));
}

/** Decodes G.711 `payload` into `out`, returning the sample count. */
export function decodeG711(encoding: 'PCMU' | 'PCMA', payload: Uint8Array, out: Int16Array): number {
  return encoding === 'PCMU' ? ulawDecode(payload, out) : alawDecode(payload, out);
}

export function encodeG711(encoding: 'PCMU' | 'PCMA', pcm: Int16Array, out: Uint8Array): number {
  return encoding === 'PCMU' ? ulawEncode(pcm, out) : alawEncode(pcm, out);
}

/**
 * Direct code-word maps between µ-law and A-law (through the linear value, as G.711 Appendix
 * defines the conversion), so transcoding is one table lookup per byte, in place.
 */
export const ULAW_TO_ALAW = Uint8Array.from({ length: 256 }, (_, code) => linearToAlaw(ulawToLinear(code)));
export const ALAW_TO_ULAW = Uint8Array.from({ length: 256 }, (_, code) => linearToUlaw(alawToLinear(code)));
