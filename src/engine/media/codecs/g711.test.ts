/** @module Tests of G.711 companding against ITU-T G.711 reference values and round trips. */
import t from 'tap';
import {
  alawDecode,
  alawEncode,
  alawToLinear,
  linearToAlaw,
  linearToUlaw,
  ulawDecode,
  ulawEncode,
  ulawToLinear,
} from './g711.js';

/** ITU-T G.711 Table 2a: µ-law decoder output (14-bit units) for segment s, step q. */
const ulawReference = (s: number, q: number): number => ((2 * q + 33) << s) - 33;
/** ITU-T G.711 Table 1a: A-law decoder output (13-bit units) for segment s, step q. */
const alawReference = (s: number, q: number): number => (s === 0 ? 2 * q + 1 : (2 * q + 33) << (s - 1));

t.test('ITU-T G.711 Table 2a: every µ-law code decodes to the reference value', (t) => {
  for (let s = 0; s < 8; s++) {
    for (let q = 0; q < 16; q++) {
      const magnitude = (s << 4) | q;
      // All bits are inverted on the wire; after inversion the sign bit set means negative.
      t.equal(ulawToLinear(~magnitude & 0xff), ulawReference(s, q) * 4, `+ s=${s} q=${q}`);
      t.equal(ulawToLinear(~(magnitude | 0x80) & 0xff), -ulawReference(s, q) * 4, `- s=${s} q=${q}`);
    }
  }
  t.equal(ulawToLinear(0xff), 0, '0xFF is +0');
  t.equal(ulawToLinear(0x7f), 0, '0x7F is -0');
  t.equal(ulawToLinear(0x80), 32124, 'largest positive');
  t.equal(ulawToLinear(0x00), -32124, 'largest negative');
  t.end();
});

t.test('ITU-T G.711 Table 1a: every A-law code decodes to the reference value', (t) => {
  for (let s = 0; s < 8; s++) {
    for (let q = 0; q < 16; q++) {
      const magnitude = (s << 4) | q;
      // Even bits are inverted on the wire; the sign bit set means positive.
      t.equal(alawToLinear((magnitude | 0x80) ^ 0x55), alawReference(s, q) * 8, `+ s=${s} q=${q}`);
      t.equal(alawToLinear(magnitude ^ 0x55), -alawReference(s, q) * 8, `- s=${s} q=${q}`);
    }
  }
  t.equal(alawToLinear(0xd5), 8, '0xD5 is the smallest positive step');
  t.equal(alawToLinear(0x55), -8, '0x55 is the smallest negative step');
  t.equal(alawToLinear(0xaa), 32256, 'largest positive');
  t.equal(alawToLinear(0x2a), -32256, 'largest negative');
  t.end();
});

t.test('ITU-T G.711: encoding then decoding is exact for every code word', (t) => {
  let ulawBad = 0;
  let alawBad = 0;
  for (let c = 0; c < 256; c++) {
    // µ-law has two zeros (0x7F, 0xFF); the encoder emits +0 for both.
    const expectU = c === 0x7f ? 0xff : c;
    if (linearToUlaw(ulawToLinear(c)) !== expectU) ulawBad++;
    if (linearToAlaw(alawToLinear(c)) !== c) alawBad++;
  }
  t.equal(ulawBad, 0, 'µ-law code words survive decode→encode');
  t.equal(alawBad, 0, 'A-law code words survive decode→encode');
  t.end();
});

t.test('ITU-T G.711: encoding stays within one quantization step and is monotonic', (t) => {
  const levelsU = [...new Set(Array.from({ length: 256 }, (_, c) => ulawToLinear(c)))].sort((a, b) => a - b);
  const levelsA = [...new Set(Array.from({ length: 256 }, (_, c) => alawToLinear(c)))].sort((a, b) => a - b);
  let worstU = 0;
  let worstA = 0;
  let prevU = -Infinity;
  let prevA = -Infinity;
  let monotonic = true;
  for (let x = -32768; x <= 32767; x++) {
    const u = ulawToLinear(linearToUlaw(x));
    const a = alawToLinear(linearToAlaw(x));
    if (u < prevU || a < prevA) monotonic = false;
    prevU = u;
    prevA = a;
    // Error relative to the gap between the neighbouring levels: at most one step (truncation
    // within 16-bit scaling), except beyond the clip level at the ends.
    if (Math.abs(x) <= 32124) worstU = Math.max(worstU, Math.abs(u - x) / stepAt(levelsU, x));
    if (Math.abs(x) <= 32256) worstA = Math.max(worstA, Math.abs(a - x) / stepAt(levelsA, x));
  }
  t.ok(monotonic, 'decode(encode(x)) never decreases as x increases');
  t.ok(worstU <= 1, `µ-law error within one step (worst ${worstU.toFixed(3)})`);
  t.ok(worstA <= 1, `A-law error within one step (worst ${worstA.toFixed(3)})`);
  t.end();
});

function stepAt(levels: number[], x: number): number {
  let i = levels.findIndex((l) => l >= x);
  if (i <= 0) i = 1;
  return (levels[i] ?? 0) - (levels[i - 1] ?? 0);
}

t.test('block codecs match the single-sample functions and reject short outputs', (t) => {
  const pcm = new Int16Array(160);
  for (let i = 0; i < pcm.length; i++) pcm[i] = Math.round(12000 * Math.sin((2 * Math.PI * 440 * i) / 8000));
  const u = Buffer.alloc(160);
  const a = Buffer.alloc(160);
  t.equal(ulawEncode(pcm, u), 160);
  t.equal(alawEncode(pcm, a), 160);
  const backU = new Int16Array(160);
  const backA = new Int16Array(160);
  t.equal(ulawDecode(u, backU), 160);
  t.equal(alawDecode(a, backA), 160);
  for (let i = 0; i < 160; i++) {
    if (u[i] !== linearToUlaw(pcm[i]!) || a[i] !== linearToAlaw(pcm[i]!)) t.fail(`encode mismatch at ${i}`);
    if (backU[i] !== ulawToLinear(u[i]!) || backA[i] !== alawToLinear(a[i]!)) t.fail(`decode mismatch at ${i}`);
  }
  t.throws(() => ulawDecode(u, new Int16Array(10)), RangeError);
  t.throws(() => alawEncode(pcm, Buffer.alloc(10)), RangeError);
  t.end();
});
