/**
 * @module What a recording file really holds (docs/SECURITY.md, Serving recordings): its media
 * type is read from its first bytes, never the type a provider's download claimed.
 */
import type { Readable } from 'node:stream';
import type { RecordingFiles } from '../common/recording-files.js';

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

/** A recording as it will be served: its size, the format its first bytes show, and its content. */
export interface RecordingFile {
  size: number;
  format: RecordingFormat;
  stream: () => Readable;
}

/** Size and format of a stored recording; rejects when it cannot be read (missing, unreadable). */
export async function inspectRecording(recordings: Pick<RecordingFiles, 'read'>, key: string): Promise<RecordingFile> {
  const stored = await recordings.read(key, HEAD_BYTES);
  return { size: stored.size, format: recordingFormatOf(stored.head), stream: stored.stream };
}
