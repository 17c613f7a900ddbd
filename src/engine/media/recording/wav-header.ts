/** @module The canonical 44-byte RIFF/WAVE header for 16-bit PCM, written by hand so it can be patched in place. */

/*
 * RIFF WAVE with a PCM "fmt " chunk (Microsoft/IBM, Multimedia Programming Interface and Data
 * Specifications 1.0, 1991, "WAVE Form"; WAVE_FORMAT_PCM = 0x0001). All integers little-endian.
 *
 *  offset size  field
 *   0      4    "RIFF"
 *   4      4    RIFF chunk size = 36 + data size   <- patched as the file grows
 *   8      4    "WAVE"
 *  12      4    "fmt "
 *  16      4    fmt chunk size = 16
 *  20      2    format tag = 1 (PCM)
 *  22      2    channels
 *  24      4    sample rate
 *  28      4    byte rate = rate × block align
 *  32      2    block align = channels × 2
 *  34      2    bits per sample = 16
 *  36      4    "data"
 *  40      4    data size in bytes                  <- patched as the file grows
 *  44      ...  samples, interleaved per frame (channel 0 = left first)
 */

export const WAV_HEADER_BYTES = 44;
export const RIFF_SIZE_OFFSET = 4;
export const DATA_SIZE_OFFSET = 40;
const WAVE_FORMAT_PCM = 1;
const FMT_CHUNK_BYTES = 16;
const BITS_PER_SAMPLE = 16;

/** The format fields of a PCM WAV file. */
export interface WavFormat {
  channels: number;
  sampleRate: number;
}

/** Builds a header for `dataBytes` of 16-bit PCM. */
export function buildWavHeader(format: WavFormat, dataBytes: number): Buffer {
  const h = Buffer.alloc(WAV_HEADER_BYTES);
  const blockAlign = format.channels * (BITS_PER_SAMPLE / 8);
  h.write('RIFF', 0, 'ascii');
  h.writeUInt32LE(36 + dataBytes, RIFF_SIZE_OFFSET);
  h.write('WAVE', 8, 'ascii');
  h.write('fmt ', 12, 'ascii');
  h.writeUInt32LE(FMT_CHUNK_BYTES, 16);
  h.writeUInt16LE(WAVE_FORMAT_PCM, 20);
  h.writeUInt16LE(format.channels, 22);
  h.writeUInt32LE(format.sampleRate, 24);
  h.writeUInt32LE(format.sampleRate * blockAlign, 28);
  h.writeUInt16LE(blockAlign, 32);
  h.writeUInt16LE(BITS_PER_SAMPLE, 34);
  h.write('data', 36, 'ascii');
  h.writeUInt32LE(dataBytes, DATA_SIZE_OFFSET);
  return h;
}

/** The two size fields, as written at {@link RIFF_SIZE_OFFSET} and {@link DATA_SIZE_OFFSET}. */
export function sizeFields(dataBytes: number): { riff: Buffer; data: Buffer } {
  const riff = Buffer.alloc(4);
  riff.writeUInt32LE(36 + dataBytes);
  const data = Buffer.alloc(4);
  data.writeUInt32LE(dataBytes);
  return { riff, data };
}

/** A header as found in a file: the format, the sizes it claims, and the block size. */
export interface ParsedWavHeader extends WavFormat {
  riffSize: number;
  dataBytes: number;
  blockAlign: number;
}

/** Parses a canonical 44-byte 16-bit PCM header; null when the bytes are not one. */
export function parseWavHeader(h: Uint8Array): ParsedWavHeader | null {
  if (h.length < WAV_HEADER_BYTES) return null;
  const b = Buffer.from(h.buffer, h.byteOffset, WAV_HEADER_BYTES);
  const tag = (at: number): string => b.toString('ascii', at, at + 4);
  if (tag(0) !== 'RIFF' || tag(8) !== 'WAVE' || tag(12) !== 'fmt ' || tag(36) !== 'data') return null;
  if (b.readUInt32LE(16) !== FMT_CHUNK_BYTES || b.readUInt16LE(20) !== WAVE_FORMAT_PCM || b.readUInt16LE(34) !== BITS_PER_SAMPLE) return null;
  const channels = b.readUInt16LE(22);
  if (channels < 1) return null;
  return {
    channels,
    sampleRate: b.readUInt32LE(24),
    blockAlign: b.readUInt16LE(32),
    riffSize: b.readUInt32LE(RIFF_SIZE_OFFSET),
    dataBytes: b.readUInt32LE(DATA_SIZE_OFFSET),
  };
}
