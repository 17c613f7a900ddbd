/** @module ITU-T G.711 µ-law and A-law companding between 8-bit code words and 16-bit linear PCM. */

/*
 * Code word layout (ITU-T G.711 §2, Tables 1a/2a):
 *
 *    7   6   5   4   3   2   1   0
 *  +---+-----------+---------------+
 *  | S |  segment  |  quantization |
 *  +---+-----------+---------------+
 *
 * µ-law: every bit is inverted on the wire; after inversion S=1 is negative, so the wire
 *        character 0xFF is +0 and 0x7F is -0. Magnitude in 14-bit units is ((2q+33) << seg) - 33.
 * A-law: the even bits are inverted on the wire (XOR 0x55); S=1 is positive. Magnitude in 13-bit
 *        units is 2q+1 for segment 0 and (2q+33) << (seg-1) above it.
 * Linear values here are the 14-bit (µ) and 13-bit (A) decoder outputs scaled to 16 bits, as in
 * the ITU-T G.191 software tools: µ-law spans ±32124, A-law ±32256.
 */

const ULAW_BIAS = 0x84; // 33 in 14-bit units, scaled by 4
const ULAW_CLIP = 8159; // 14-bit clip level: the top decision value of segment 7
const ULAW_SEG_END = [0x3f, 0x7f, 0xff, 0x1ff, 0x3ff, 0x7ff, 0xfff, 0x1fff] as const;
const ALAW_SEG_END = [0x1f, 0x3f, 0x7f, 0xff, 0x1ff, 0x3ff, 0x7ff, 0xfff] as const;
const SIGN_BIT = 0x80;
const QUANT_MASK = 0x0f;
const SEG_MASK = 0x70;
const SEG_SHIFT = 4;
const ALAW_EVEN_BITS = 0x55;

function segmentOf(value: number, ends: readonly number[]): number {
  for (let seg = 0; seg < ends.length; seg++) if (value <= (ends[seg] ?? 0)) return seg;
  return ends.length;
}

function ulawDecodeOne(code: number): number {
  const u = ~code & 0xff;
  const t = (((u & QUANT_MASK) << 3) + ULAW_BIAS) << ((u & SEG_MASK) >> SEG_SHIFT);
  return u & SIGN_BIT ? ULAW_BIAS - t : t - ULAW_BIAS;
}

function alawDecodeOne(code: number): number {
  const a = code ^ ALAW_EVEN_BITS;
  let t = (a & QUANT_MASK) << 4;
  const seg = (a & SEG_MASK) >> SEG_SHIFT;
  if (seg === 0) t += 8;
  else t = (t + 0x108) << (seg - 1);
  return a & SIGN_BIT ? t : -t;
}

function ulawEncodeOne(sample: number): number {
  let pcm = sample >> 2; // 14-bit domain
  let mask = 0xff;
  if (pcm < 0) {
    pcm = -pcm;
    mask = 0x7f;
  }
  if (pcm > ULAW_CLIP) pcm = ULAW_CLIP;
  pcm += ULAW_BIAS >> 2;
  const seg = segmentOf(pcm, ULAW_SEG_END);
  if (seg >= 8) return 0x7f ^ mask;
  return ((seg << SEG_SHIFT) | ((pcm >> (seg + 1)) & QUANT_MASK)) ^ mask;
}

function alawEncodeOne(sample: number): number {
  let pcm = sample >> 3; // 13-bit domain
  let mask = 0xd5;
  if (pcm < 0) {
    mask = ALAW_EVEN_BITS;
    pcm = -pcm - 1;
  }
  const seg = segmentOf(pcm, ALAW_SEG_END);
  if (seg >= 8) return 0x7f ^ mask;
  const q = seg < 2 ? (pcm >> 1) & QUANT_MASK : (pcm >> seg) & QUANT_MASK;
  return ((seg << SEG_SHIFT) | q) ^ mask;
}

/** 256-entry decode tables: one lookup per sample on the hot path. */
const ULAW_TO_LINEAR = new Int16Array(256);
const ALAW_TO_LINEAR = new Int16Array(256);
/** 65,536-entry encode tables indexed by the sample's unsigned 16-bit pattern (64 KiB each). */
const LINEAR_TO_ULAW = new Uint8Array(65536);
const LINEAR_TO_ALAW = new Uint8Array(65536);

for (let c = 0; c < 256; c++) {
  ULAW_TO_LINEAR[c] = ulawDecodeOne(c);
  ALAW_TO_LINEAR[c] = alawDecodeOne(c);
}
for (let i = 0; i < 65536; i++) {
  const s = (i << 16) >> 16;
  LINEAR_TO_ULAW[i] = ulawEncodeOne(s);
  LINEAR_TO_ALAW[i] = alawEncodeOne(s);
}

/** Decodes one µ-law code word (0..255) to 16-bit linear PCM. */
export function ulawToLinear(code: number): number {
  return ULAW_TO_LINEAR[code & 0xff] ?? 0;
}

/** Encodes one 16-bit linear sample to a µ-law code word. */
export function linearToUlaw(sample: number): number {
  return LINEAR_TO_ULAW[sample & 0xffff] ?? 0;
}

/** Decodes one A-law code word (0..255) to 16-bit linear PCM. */
export function alawToLinear(code: number): number {
  return ALAW_TO_LINEAR[code & 0xff] ?? 0;
}

/** Encodes one 16-bit linear sample to an A-law code word. */
export function linearToAlaw(sample: number): number {
  return LINEAR_TO_ALAW[sample & 0xffff] ?? 0;
}

function checkRoom(needed: number, room: number): void {
  // A too-small output buffer is the caller's bug; writing a partial frame would hide it.
  if (room < needed) throw new RangeError(`G.711: output holds ${room} samples, needs ${needed}`);
}

function decodeWith(table: Int16Array, buf: Uint8Array, out: Int16Array): number {
  const n = buf.length;
  checkRoom(n, out.length);
  for (let i = 0; i < n; i++) out[i] = table[buf[i] as number] as number;
  return n;
}

function encodeWith(table: Uint8Array, pcm: Int16Array, out: Uint8Array): number {
  const n = pcm.length;
  checkRoom(n, out.length);
  for (let i = 0; i < n; i++) out[i] = table[(pcm[i] as number) & 0xffff] as number;
  return n;
}

/** Decodes µ-law bytes into `out` (at least `buf.length` long). Returns the sample count. */
export function ulawDecode(buf: Uint8Array, out: Int16Array): number {
  return decodeWith(ULAW_TO_LINEAR, buf, out);
}

/** Encodes PCM into µ-law bytes in `out` (at least `pcm.length` long). Returns the byte count. */
export function ulawEncode(pcm: Int16Array, out: Uint8Array): number {
  return encodeWith(LINEAR_TO_ULAW, pcm, out);
}

/** Decodes A-law bytes into `out` (at least `buf.length` long). Returns the sample count. */
export function alawDecode(buf: Uint8Array, out: Int16Array): number {
  return decodeWith(ALAW_TO_LINEAR, buf, out);
}

/** Encodes PCM into A-law bytes in `out` (at least `pcm.length` long). Returns the byte count. */
export function alawEncode(pcm: Int16Array, out: Uint8Array): number {
  return encodeWith(LINEAR_TO_ALAW, pcm, out);
}

/** The µ-law code word of digital silence (+0), used to fill muted or missing audio. */
export const ULAW_SILENCE = 0xff;
/** The A-law code word of digital silence (+0 after even-bit inversion). */
export const ALAW_SILENCE = 0xd5;
