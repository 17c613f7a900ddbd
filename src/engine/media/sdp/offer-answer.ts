/** @module SDP offer/answer (RFC 3264) for one audio stream: create offers, answer offers, read answers. */
import { write, type MediaDescription as SdpMedia, type SessionDescription } from 'sdp-transform';
import { sameCodec, type CodecDescription } from './codecs.js';
import { readRemoteDescription, type Direction, type RemoteAudio, type SdpRejection } from './sdp-description.js';
import { acceptedCrypto, answerCrypto, cryptoLine, offerCryptoLines, type LocalSrtp, type NegotiatedSrtp } from './sdes.js';

/** What we can do on one leg: our address and port, codecs in preference order, and options. */
export interface LocalCapabilities {
  address: string;
  port: number;
  /** Audio codecs in order of preference, telephone-event included when DTMF events are wanted. */
  codecs: readonly CodecDescription[];
  ptime?: number;
  /** The direction we want (sendonly to put the far end on hold, RFC 3264 §8.4). */
  direction?: Direction;
  /** Offer rtcp-mux (RFC 5761), or accept it when offered. */
  rtcpMux?: boolean;
  /** o= line values: the session id is fixed per call, the version grows with each new offer (RFC 3264 §8). */
  sessionId: number;
  sessionVersion: number;
  username?: string;
  /** SRTP with SDES keys (RFC 4568); absent is plain RTP, as `disabled`. */
  srtp?: LocalSrtp;
}

/** The outcome of a negotiation, which the media session is configured from. */
export interface NegotiatedAudio {
  remote: RemoteAudio;
  /** The one audio codec both sides use, with the payload type the far end expects. */
  codec: CodecDescription;
  telephoneEvent: CodecDescription | null;
  /**
   * Payload types the far end will send us: ours from the description we sent. In an answer we
   * reuse the offer's numbers, so they equal `codec` and `telephoneEvent`'s (RFC 3264 §6.1).
   */
  receivePayloadType: number;
  receiveTelephoneEventPayloadType: number | null;
  ptime: number;
  /** Our direction for this stream. */
  direction: Direction;
  rtcpMux: boolean;
  /** The SRTP keys when the stream is RTP/SAVP, null for plain RTP. */
  srtp: NegotiatedSrtp | null;
}

const PTIME_DEFAULT = 20;

/**
 * RFC 3264 §6.1: the answer's direction mirrors the offer's (sendonly → recvonly, recvonly →
 * sendonly, inactive → inactive), narrowed further by what we want ourselves.
 */
export function answerDirection(offered: Direction, wanted: Direction): Direction {
  const weSend = (offered === 'sendrecv' || offered === 'recvonly') && (wanted === 'sendrecv' || wanted === 'sendonly');
  const weRecv = (offered === 'sendrecv' || offered === 'sendonly') && (wanted === 'sendrecv' || wanted === 'recvonly');
  return weSend ? (weRecv ? 'sendrecv' : 'sendonly') : weRecv ? 'recvonly' : 'inactive';
}

/** Our direction after the far end answered `answered` to our offer (RFC 3264 §6.1, read from our side). */
function directionFromAnswer(answered: Direction, offered: Direction): Direction {
  return answerDirection(answered, offered);
}

/**
 * Creates an offer listing all our codecs (RFC 3264 §5). With encryption `required` it is RTP/SAVP
 * with one a=crypto line per suite we implement (RFC 4568 §7.1.1); otherwise plain RTP/AVP.
 */
export function createOffer(local: LocalCapabilities): string {
  const crypto = local.srtp?.encryption === 'required' ? offerCryptoLines(local.srtp.keyring) : null;
  return write(sessionOf(local, [buildMedia(local, local.codecs, local.direction ?? 'sendrecv', local.rtcpMux ?? false, crypto)]));
}

/**
 * Answers an offer (RFC 3264 §6): picks the offerer's most preferred audio codec that we support,
 * keeping the offerer's payload type numbers (§6.1 SHOULD), adds telephone-event when both have it,
 * and rejects other m= lines with port 0 (§6). Null codec overlap is a 488.
 */
export function createAnswer(offerSdp: string, local: LocalCapabilities): { sdp: string; negotiated: NegotiatedAudio } | SdpRejection {
  const remote = readRemoteDescription(offerSdp, local.srtp?.encryption);
  if ('error' in remote) return remote;
  // The description reader only picks an RTP/SAVP stream that has a usable crypto line.
  const srtp = remote.audio.protocol === 'RTP/SAVP' && local.srtp ? answerCrypto(remote.audio.crypto, local.srtp.keyring) : null;
  const negotiated = negotiate(remote.audio, local, answerDirection(remote.audio.direction, local.direction ?? 'sendrecv'), remote.audio.codecs, false, srtp);
  if ('error' in negotiated) return negotiated;
  const codecs = negotiated.telephoneEvent ? [negotiated.codec, negotiated.telephoneEvent] : [negotiated.codec];
  const audio = buildMedia(local, codecs, negotiated.direction, negotiated.rtcpMux, srtp ? [cryptoLine(srtp.tag, srtp.send)] : null);
  // RFC 3264 §6: one m= line per offered one, in order; those we decline get port 0.
  const media = remote.session.media.map((m, i): SdpMedia =>
    i === remote.audio.index ? audio : { type: m.type, port: 0, protocol: m.protocol, payloads: m.payloads ?? '', rtp: [], fmtp: [] },
  );
  return { sdp: write(sessionOf(local, media)), negotiated };
}

/** Reads the answer to an offer we made with `local` (RFC 3264 §7). */
export function processAnswer(answerSdp: string, local: LocalCapabilities): NegotiatedAudio | SdpRejection {
  // The answer keeps the offer's transport (RFC 3264 §6): RTP/SAVP only when we offered it.
  const offeredSrtp = local.srtp?.encryption === 'required' ? local.srtp : null;
  const remote = readRemoteDescription(answerSdp, offeredSrtp ? 'required' : 'disabled');
  if ('error' in remote) return remote;
  let srtp: NegotiatedSrtp | null = null;
  if (offeredSrtp) {
    srtp = acceptedCrypto(remote.audio.crypto, offeredSrtp.keyring);
    if (srtp === null) return { error: 'no-usable-crypto', status: 488, detail: 'the answer accepts none of the offered a=crypto lines (RFC 4568 7.1.3)' };
  }
  return negotiate(remote.audio, local, directionFromAnswer(remote.audio.direction, local.direction ?? 'sendrecv'), remote.audio.codecs, true, srtp);
}

function negotiate(
  remote: RemoteAudio,
  local: LocalCapabilities,
  direction: Direction,
  preference: readonly CodecDescription[],
  weOffered: boolean,
  srtp: NegotiatedSrtp | null,
): NegotiatedAudio | SdpRejection {
  const isAudio = (c: CodecDescription): boolean => c.encoding !== 'telephone-event';
  const codec = preference.find((c) => isAudio(c) && local.codecs.some((l) => sameCodec(l, c)));
  if (!codec) return { error: 'no-common-codec', status: 488, detail: 'no audio codec in common' };
  const remoteEvents = remote.codecs.find((c) => c.encoding === 'telephone-event' && c.clockRate === codec.clockRate);
  const localEvents = local.codecs.find((c) => c.encoding === 'telephone-event' && c.clockRate === codec.clockRate);
  const telephoneEvent = localEvents && remoteEvents ? remoteEvents : null;
  const ours = (c: CodecDescription | null): number | null =>
    c === null ? null : weOffered ? (local.codecs.find((l) => sameCodec(l, c))?.payloadType ?? c.payloadType) : c.payloadType;
  return {
    remote,
    codec,
    telephoneEvent,
    receivePayloadType: ours(codec) ?? codec.payloadType,
    receiveTelephoneEventPayloadType: ours(telephoneEvent),
    ptime: remote.ptime ?? local.ptime ?? PTIME_DEFAULT,
    direction,
    rtcpMux: (local.rtcpMux ?? false) && remote.rtcpMux,
    srtp,
  };
}

function sessionOf(local: LocalCapabilities, media: SdpMedia[]): SessionDescription {
  return {
    version: 0,
    origin: { username: local.username ?? '-', sessionId: local.sessionId, sessionVersion: local.sessionVersion, netType: 'IN', ipVer: 4, address: local.address },
    name: '-',
    connection: { version: 4, ip: local.address },
    timing: { start: 0, stop: 0 },
    media,
  };
}

type CryptoLines = NonNullable<SdpMedia['crypto']> | null;

function buildMedia(local: LocalCapabilities, codecs: readonly CodecDescription[], direction: Direction, rtcpMux: boolean, crypto: CryptoLines): SdpMedia {
  const media: SdpMedia = {
    type: 'audio',
    port: local.port,
    protocol: crypto ? 'RTP/SAVP' : 'RTP/AVP',
    payloads: codecs.map((c) => c.payloadType).join(' '),
    rtp: codecs.map((c) => ({ payload: c.payloadType, codec: c.encoding, rate: c.clockRate })),
    fmtp: codecs.filter((c) => c.fmtp !== undefined).map((c) => ({ payload: c.payloadType, config: c.fmtp ?? '' })),
    ptime: local.ptime ?? PTIME_DEFAULT,
    direction,
  };
  // RFC 3605: name the RTCP port explicitly; with rtcp-mux (RFC 5761 §5.1.3) it is the RTP port.
  media.rtcp = { port: rtcpMux ? local.port : local.port + 1 };
  if (rtcpMux) media.rtcpMux = 'rtcp-mux';
  if (crypto) media.crypto = crypto;
  return media;
}
