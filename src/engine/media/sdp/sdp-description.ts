/** @module Reading the audio stream of a remote SDP (RFC 4566) into the terms the media engine needs. */
import { parse, type MediaDescription as SdpMedia, type SessionDescription } from 'sdp-transform';
import { resolveCodec, type CodecDescription } from './codecs.js';
import { usableCryptoOffers, type CryptoOffer, type MediaEncryption } from './sdes.js';

/** RFC 3264 §5.1 stream direction, from the sender's point of view. */
export type Direction = 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive';

/** A transport address from SDP. */
export interface SdpAddress {
  address: string;
  port: number;
}

/** The audio stream of a remote description. */
export interface RemoteAudio {
  /** Index of the m= line, so an answer can keep the offer's order (RFC 3264 §6). */
  index: number;
  /** RTP/SAVP (SRTP, RFC 3711) or plain RTP/AVP. */
  protocol: 'RTP/AVP' | 'RTP/SAVP';
  /** The usable a=crypto lines of an RTP/SAVP stream, in the sender's order (RFC 4568); empty for RTP/AVP. */
  crypto: CryptoOffer[];
  rtp: SdpAddress;
  /** From a=rtcp (RFC 3605), else the RTP port + 1 (RFC 3550 §11). */
  rtcp: SdpAddress;
  rtcpMux: boolean;
  /** Recognised codecs in the sender's order of preference; unknown payload types are skipped. */
  codecs: CodecDescription[];
  ptime: number | null;
  /**
   * The sender's direction as it applies: with the RFC 2543 c=0.0.0.0 form the sender receives
   * nothing (RFC 3264 §8.4: neither RTP nor RTCP is sent to it), so sendrecv reads as sendonly
   * and recvonly as inactive.
   */
  direction: Direction;
  /** RFC 3264 §8.4 hold: sendonly or inactive, or the RFC 2543 c=0.0.0.0 form. */
  onHold: boolean;
}

/** The unspecified address of RFC 2543 hold (and its IPv6 form): nothing may be sent there. */
export function isUnspecifiedAddress(address: string): boolean {
  return address === '0.0.0.0' || address === '::';
}

/** Whether the side whose direction is `direction` sends media (RFC 3264 §5.1). */
export function sendsMedia(direction: Direction): boolean {
  return direction === 'sendrecv' || direction === 'sendonly';
}

/** RFC 3264 §8.4: a sender at c=0.0.0.0 receives nothing, whatever its a= direction says. */
function withoutReceiving(direction: Direction): Direction {
  if (direction === 'sendrecv') return 'sendonly';
  if (direction === 'recvonly') return 'inactive';
  return direction;
}

/** A remote description that cannot be used, with the SIP status the caller answers with. */
export interface SdpRejection {
  error: 'malformed-sdp' | 'no-audio' | 'no-common-codec' | 'no-usable-crypto';
  /** RFC 3261 §21.4.26 488 Not Acceptable Here for both. */
  status: 488 | 400;
  detail: string;
}

/** The parsed description plus its audio stream. */
export interface RemoteDescription {
  session: SessionDescription;
  audio: RemoteAudio;
}

/**
 * Parses `sdp` and picks its audio stream: the first with a non-zero port in a transport that
 * `encryption` lets us speak, RTP/SAVP before RTP/AVP.
 */
export function readRemoteDescription(sdp: string, encryption: MediaEncryption = 'disabled'): RemoteDescription | SdpRejection {
  let session: SessionDescription;
  try {
    session = parse(sdp);
  } catch (cause) {
    return { error: 'malformed-sdp', status: 400, detail: String(cause) };
  }
  if (session.version !== 0 || !Array.isArray(session.media)) {
    return { error: 'malformed-sdp', status: 400, detail: 'v=0 and m= lines required' };
  }
  const chosen = chooseAudio(session.media, encryption);
  if ('error' in chosen) return chosen;
  const { index, media, crypto } = chosen;
  // RFC 4566 §5.7: a media-level c= overrides the session-level one.
  const address = media.connection?.ip ?? session.connection?.ip;
  if (address === undefined) return { error: 'malformed-sdp', status: 400, detail: 'no c= line for audio' };
  const stated = media.direction ?? session.direction ?? 'sendrecv';
  const unspecified = isUnspecifiedAddress(address);
  const direction = unspecified ? withoutReceiving(stated) : stated;
  const rtcpMux = media.rtcpMux === 'rtcp-mux';
  return {
    session,
    audio: {
      index,
      protocol: crypto.length > 0 ? 'RTP/SAVP' : 'RTP/AVP',
      crypto,
      rtp: { address, port: media.port },
      rtcp: { address: media.rtcp?.address ?? address, port: media.rtcp?.port ?? (rtcpMux ? media.port : media.port + 1) },
      rtcpMux,
      codecs: codecsOf(media),
      ptime: media.ptime ?? null,
      direction,
      onHold: direction === 'sendonly' || direction === 'inactive' || unspecified,
    },
  };
}

/**
 * The audio stream we can speak. An answer must keep the offer's transport (RFC 3264 §6), so a
 * stream in a profile we do not implement (RTP/SAVPF, DTLS-SRTP) is never answered as another:
 * an offer that also has a stream we can speak gets that one, the others declined with port 0.
 * RTP/SAVP needs a crypto line we can use (RFC 4568 §7.1.2), else it counts as not speakable.
 */
function chooseAudio(all: SdpMedia[], encryption: MediaEncryption): { index: number; media: SdpMedia; crypto: CryptoOffer[] } | SdpRejection {
  const audio = all.map((media, index) => ({ media, index })).filter(({ media }) => media.type === 'audio' && media.port !== 0);
  if (encryption !== 'disabled') {
    for (const { media, index } of audio) {
      if (media.protocol !== 'RTP/SAVP') continue;
      const crypto = usableCryptoOffers(media);
      if (crypto.length > 0) return { index, media, crypto };
    }
  }
  if (encryption !== 'required') {
    const plain = audio.find(({ media }) => media.protocol === 'RTP/AVP');
    if (plain) return { ...plain, crypto: [] };
  }
  const other = audio[0]?.media;
  if (other === undefined) return { error: 'no-audio', status: 488, detail: 'no active audio stream' };
  if (other.protocol === 'RTP/SAVP' && encryption !== 'disabled') {
    return { error: 'no-usable-crypto', status: 488, detail: 'no a=crypto line with a suite, key and parameters we support (RFC 4568)' };
  }
  const speakable = encryption === 'required' ? 'RTP/SAVP with SDES keys' : encryption === 'allowed' ? 'RTP/AVP or RTP/SAVP with SDES keys' : 'RTP/AVP';
  return { error: 'no-audio', status: 488, detail: `audio over ${other.protocol} is not accepted here (${speakable} only)` };
}

function codecsOf(media: SdpMedia): CodecDescription[] {
  const payloads = String(media.payloads ?? '').split(/\s+/).filter(Boolean).map(Number);
  const out: CodecDescription[] = [];
  for (const pt of payloads) {
    const rtpmap = media.rtp.find((r) => r.payload === pt);
    const fmtp = media.fmtp.find((f) => f.payload === pt)?.config;
    const codec = resolveCodec(pt, rtpmap, fmtp);
    if (codec) out.push(codec);
  }
  return out;
}

export function isSdpRejection(value: unknown): value is SdpRejection {
  return typeof value === 'object' && value !== null && 'error' in value && 'status' in value;
}
