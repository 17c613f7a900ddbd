/** @module Audio codecs the media engine can negotiate, with their RFC 3551 static payload types. */

/** Encoding names as they appear in a=rtpmap (compared case-insensitively, RFC 4566 §6). */
export type EncodingName = 'PCMU' | 'PCMA' | 'G722' | 'telephone-event';

/** A codec as offered or answered: payload type, encoding, RTP clock rate, optional fmtp. */
export interface CodecDescription {
  encoding: EncodingName;
  payloadType: number;
  clockRate: number;
  fmtp?: string;
}

/**
 * The codecs we know. G.722 is advertised at 8000 Hz though it samples at 16 kHz: RFC 3551 §4.5.2
 * keeps the RTP clock at 8000 for historical reasons.
 */
export const CODECS = {
  PCMU: { encoding: 'PCMU', payloadType: 0, clockRate: 8000 },
  PCMA: { encoding: 'PCMA', payloadType: 8, clockRate: 8000 },
  G722: { encoding: 'G722', payloadType: 9, clockRate: 8000 },
  // RFC 4733 §7.1.1: events 0-15 are DTMF, 16 is flash; dynamic type, 101 by convention.
  TELEPHONE_EVENT: { encoding: 'telephone-event', payloadType: 101, clockRate: 8000, fmtp: '0-16' },
} as const satisfies Record<string, CodecDescription>;

/** Static payload types of RFC 3551 §6 that may appear without an a=rtpmap line. */
const STATIC: Record<number, CodecDescription> = {
  0: CODECS.PCMU,
  8: CODECS.PCMA,
  9: CODECS.G722,
};

const NAMES: Record<string, EncodingName> = {
  pcmu: 'PCMU',
  pcma: 'PCMA',
  g722: 'G722',
  'telephone-event': 'telephone-event',
};

/** Resolves a payload type from an m= line: its rtpmap if any, else the static table; null when unknown. */
export function resolveCodec(payloadType: number, rtpmap: { codec: string; rate?: number } | undefined, fmtp?: string): CodecDescription | null {
  if (rtpmap) {
    const encoding = NAMES[rtpmap.codec.toLowerCase()];
    if (!encoding) return null;
    const codec: CodecDescription = { encoding, payloadType, clockRate: rtpmap.rate ?? 8000 };
    if (fmtp !== undefined) codec.fmtp = fmtp;
    return codec;
  }
  return STATIC[payloadType] ?? null;
}

/** Same codec in the sense of RFC 3264 §6.1: encoding name and clock rate match, payload type may differ. */
export function sameCodec(a: CodecDescription, b: CodecDescription): boolean {
  return a.encoding === b.encoding && a.clockRate === b.clockRate;
}
