/** @module Tests of L16 byte order against Node's own big-endian reader and writer. */
import t from 'tap';
import { l16Decode, l16Encode } from './l16.js';

t.test('RFC 3551 §4.5.11: L16 is most significant byte first', (t) => {
  const pcm = Int16Array.from([0, 1, -1, 0x1234, -32768, 32767, -2]);
  const wire = Buffer.alloc(pcm.length * 2);
  t.equal(l16Encode(pcm, wire), 14);
  const expected = Buffer.alloc(14);
  pcm.forEach((s, i) => expected.writeInt16BE(s, i * 2));
  t.same([...wire], [...expected], 'matches writeInt16BE');
  t.same([...wire.subarray(6, 8)], [0x12, 0x34]);
  const back = new Int16Array(pcm.length);
  t.equal(l16Decode(wire, back), pcm.length);
  t.same([...back], [...pcm], 'round trip');
  t.end();
});

t.test('L16: every 16-bit value survives a round trip; short outputs throw', (t) => {
  const pcm = new Int16Array(65536);
  for (let i = 0; i < pcm.length; i++) pcm[i] = i - 32768;
  const wire = Buffer.alloc(pcm.length * 2);
  l16Encode(pcm, wire);
  const back = new Int16Array(pcm.length);
  l16Decode(wire, back);
  t.ok(back.every((s, i) => s === pcm[i]));
  t.equal(l16Decode(Buffer.from([1, 2, 3]), new Int16Array(1)), 1, 'a trailing odd byte is ignored');
  t.throws(() => l16Decode(wire, new Int16Array(2)), RangeError);
  t.throws(() => l16Encode(pcm, Buffer.alloc(2)), RangeError);
  t.end();
});
