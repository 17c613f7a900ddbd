/** @module Reading the audio stream of a remote SDP (RFC 4566) into the terms the media engine needs. */
import { parse, type MediaDescription as SdpMedia, type SessionDescription } from 'sdp-transform';
import { resolveCodec, type CodecDescription } from './codecs.js';

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
  rtp: SdpAddress;
  /** From a=rtcp (RFC 3605), else the RTP port + 1 (RFC 3550 §11). */
  rtcp: SdpAddress;
  rtcpMux: boolean;
  /** Recognised codecs in the sender's order of preference; unknown payload types are skipped. */
  codecs: CodecDescription[];
  ptime: number | null;
  direction: Direction;
  /** RFC 3264 §8.4 hold: sendonly or inactive, or the RFC 2543 c=0.0.0.0 form. */
  onHold: boolean;
}

/** A remote description that cannot be used, with the SIP status the caller answers with. */
export interface SdpRejection {
  error: 'malformed-sdp' | 'no-audio' | 'no-common-codec';
  /** RFC 3261 §21.4.26 488 Not Acceptable Here for both. */
  status: 488 | 400;
  detail: string;
}

/** The parsed description plus its audio stream. */
export interface RemoteDescription {
  session: SessionDescription;
  audio: RemoteAudio;
}

/** Parses `sdp` and picks its first audio stream with a non-zero port. */
export function readRemoteDescription(sdp: string): RemoteDescription | SdpRejection {
  let session: SessionDescription;
  try {
    session = parse(sdp);
  } catch (cause) {
    return { error: 'malformed-sdp', status: 400, detail: String(cause) };
  }
  if (session.version !== 0 || !Array.isArray(session.media)) {
    return { error: 'malformed-sdp', status: 400, detail: 'v=0 and m= lines required' };
  }
  // Plain RTP only: an answer must keep the offer's transport (RFC 3264 6), and SRTP (RTP/SAVP,
  // RTP/SAVPF) or other profiles would be answered with a protocol we cannot speak. An offer that
  // also has a plain RTP/AVP audio stream gets that one; the others are declined with port 0.
  const index = session.media.findIndex((m) => m.type === 'audio' && m.port !== 0 && m.protocol === 'RTP/AVP');
  const media = session.media[index];
  if (!media) {
    const other = session.media.find((m) => m.type === 'audio' && m.port !== 0);
    return { error: 'no-audio', status: 488, detail: other ? `audio over ${other.protocol} is not supported (RTP/AVP only)` : 'no active audio stream' };
  }
  // RFC 4566 §5.7: a media-level c= overrides the session-level one.
  const address = media.connection?.ip ?? session.connection?.ip;
  if (address === undefined) return { error: 'malformed-sdp', status: 400, detail: 'no c= line for audio' };
  const direction = media.direction ?? session.direction ?? 'sendrecv';
  const rtcpMux = media.rtcpMux === 'rtcp-mux';
  return {
    session,
    audio: {
      index,
      rtp: { address, port: media.port },
      rtcp: { address: media.rtcp?.address ?? address, port: media.rtcp?.port ?? (rtcpMux ? media.port : media.port + 1) },
      rtcpMux,
      codecs: codecsOf(media),
      ptime: media.ptime ?? null,
      direction,
      onHold: direction === 'sendonly' || direction === 'inactive' || address === '0.0.0.0',
    },
  };
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
