/**
 * @module The headers a recording is served with (docs/SECURITY.md, Serving recordings): the media
 * type of what the file really holds, read from its first bytes, never the type a provider's
 * download claimed; `nosniff`; and an attachment with a filename made of the call id.
 */
import { closeSync, openSync, readSync } from 'node:fs';

export interface RecordingFormat {
  mediaType: string;
  extension: string;
}

const UNKNOWN: RecordingFormat = { mediaType: 'application/octet-stream', extension: 'bin' };

/** Bytes needed by the longest signature below (the MP4 `ftyp` box at offset 4). */
const HEAD_BYTES = 12;

const ascii = (head: Buffer, offset: number, text: string): boolean =>
  head.length >= offset + text.length && head.toString('latin1', offset, offset + text.length) === text;

/**
 * The format of a recording from its signature. The formats a recording can be in are few and
 * their signatures fixed (RIFF/WAVE, MPEG audio with or without ID3, ADTS AAC, Ogg, FLAC, WebM,
 * MP4), so they are listed here rather than through a general file-type library. Anything else
 * is `application/octet-stream`: served as a download, never as something a browser renders.
 */
export function recordingFormatOf(head: Buffer): RecordingFormat {
  if (ascii(head, 0, 'RIFF') && ascii(head, 8, 'WAVE')) return { mediaType: 'audio/wav', extension: 'wav' };
  if (ascii(head, 0, 'ID3')) return { mediaType: 'audio/mpeg', extension: 'mp3' };
  if (ascii(head, 0, 'OggS')) return { mediaType: 'audio/ogg', extension: 'ogg' };
  if (ascii(head, 0, 'fLaC')) return { mediaType: 'audio/flac', extension: 'flac' };
  if (ascii(head, 4, 'ftyp')) return { mediaType: 'audio/mp4', extension: 'm4a' };
  if (head.length >= 4 && head.readUInt32BE(0) === 0x1a45dfa3) return { mediaType: 'audio/webm', extension: 'webm' };
  // An MPEG audio frame header starts with 11 set sync bits (ISO/IEC 11172-3 2.4.1.3); layer bits
  // 00 mean an ADTS AAC header instead (ISO/IEC 13818-7 6.2), which has 12 sync bits.
  if (head.length >= 2 && head[0] === 0xff && (head[1]! & 0xe0) === 0xe0) {
    const layer = (head[1]! >> 1) & 0x03;
    if (layer !== 0) return { mediaType: 'audio/mpeg', extension: 'mp3' };
    if ((head[1]! & 0xf0) === 0xf0) return { mediaType: 'audio/aac', extension: 'aac' };
  }
  return UNKNOWN;
}

/** The first bytes of a file (fewer when it is shorter). */
function readHead(file: string): Buffer {
  const fd = openSync(file, 'r');
  try {
    const head = Buffer.alloc(HEAD_BYTES);
    return head.subarray(0, readSync(fd, head, 0, HEAD_BYTES, 0));
  } finally {
    closeSync(fd);
  }
}

/** Response headers for a recording file of a call (the call id is the gateway's own, `call_…`). */
export function recordingHeaders(file: string, callId: string, size: number): Record<string, string> {
  const format = recordingFormatOf(readHead(file));
  const name = `${callId.replace(/[^A-Za-z0-9_-]/g, '_')}.${format.extension}`;
  return {
    'Content-Type': format.mediaType,
    'Content-Length': String(size),
    'Content-Disposition': `attachment; filename="${name}"`,
    'X-Content-Type-Options': 'nosniff',
  };
}
