/**
 * @module What a recording file really holds (docs/SECURITY.md, Serving recordings): its media
 * type is read from its first bytes, never the type a provider's download claimed.
 */
import { open, stat } from 'node:fs/promises';

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

/** The first bytes of a file (fewer when it is shorter), read without holding the event loop. */
async function readHead(file: string): Promise<Buffer> {
  const handle = await open(file, 'r');
  try {
    const head = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await handle.read(head, 0, HEAD_BYTES, 0);
    return head.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** A recording file as it will be served: its size and the format its first bytes show. */
export interface RecordingFile {
  file: string;
  size: number;
  format: RecordingFormat;
}

/** Size and format of a recording file; rejects when it cannot be read (missing, unreadable). */
export async function inspectRecording(file: string): Promise<RecordingFile> {
  const [info, head] = await Promise.all([stat(file), readHead(file)]);
  return { file, size: info.size, format: recordingFormatOf(head) };
}
