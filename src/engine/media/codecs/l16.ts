/** @module L16: 16-bit linear PCM in network byte order (RFC 3551 §4.5.11), to and from host samples. */

/*
 * RFC 3551 §4.5.11: L16 carries signed two's-complement 16-bit samples, most significant byte
 * first. One mono sample on the wire:
 *
 *   0                   1
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |    MSB        |     LSB       |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 */

const BYTES_PER_SAMPLE = 2;

/** Decodes big-endian L16 bytes into `out`. Returns the sample count (a trailing odd byte is ignored). */
export function l16Decode(buf: Uint8Array, out: Int16Array): number {
  const n = buf.length >> 1;
  if (out.length < n) throw new RangeError(`L16: output holds ${out.length} samples, needs ${n}`);
  for (let i = 0, j = 0; i < n; i++, j += BYTES_PER_SAMPLE) {
    out[i] = (((buf[j] as number) << 24) >> 16) | (buf[j + 1] as number);
  }
  return n;
}

/** Encodes samples as big-endian L16 into `out`. Returns the byte count. */
export function l16Encode(pcm: Int16Array, out: Uint8Array): number {
  const bytes = pcm.length * BYTES_PER_SAMPLE;
  if (out.length < bytes) throw new RangeError(`L16: output holds ${out.length} bytes, needs ${bytes}`);
  for (let i = 0, j = 0; i < pcm.length; i++, j += BYTES_PER_SAMPLE) {
    const s = pcm[i] as number;
    out[j] = (s >> 8) & 0xff;
    out[j + 1] = s & 0xff;
  }
  return bytes;
}
