/** @module Tests of the hand-written 44-byte WAV header against the RIFF WAVE layout. */
import t from 'tap';
import { buildWavHeader, parseWavHeader, sizeFields, WAV_HEADER_BYTES } from './wav-header.js';

t.test('RIFF WAVE: the canonical PCM header has the documented fields at the documented offsets', (t) => {
  const h = buildWavHeader({ channels: 2, sampleRate: 8000 }, 32000);
  t.equal(h.length, WAV_HEADER_BYTES);
  t.equal(h.toString('ascii', 0, 4), 'RIFF');
  t.equal(h.readUInt32LE(4), 36 + 32000);
  t.equal(h.toString('ascii', 8, 16), 'WAVEfmt ');
  t.same([h.readUInt32LE(16), h.readUInt16LE(20), h.readUInt16LE(22)], [16, 1, 2], 'fmt size, PCM tag, channels');
  t.same([h.readUInt32LE(24), h.readUInt32LE(28), h.readUInt16LE(32), h.readUInt16LE(34)], [8000, 32000, 4, 16], 'rate, byte rate, block align, bits');
  t.equal(h.toString('ascii', 36, 40), 'data');
  t.equal(h.readUInt32LE(40), 32000);
  t.same(parseWavHeader(h), { channels: 2, sampleRate: 8000, blockAlign: 4, riffSize: 32036, dataBytes: 32000 });
  const { riff, data } = sizeFields(100);
  t.same([riff.readUInt32LE(0), data.readUInt32LE(0)], [136, 100]);
  t.end();
});

t.test('RIFF WAVE: anything but a 16-bit PCM header in the canonical layout is not parsed', (t) => {
  const good = buildWavHeader({ channels: 1, sampleRate: 16000 }, 0);
  t.equal(parseWavHeader(good.subarray(0, 40)), null, 'too short');
  const notPcm = Buffer.from(good);
  notPcm.writeUInt16LE(3, 20); // IEEE float
  t.equal(parseWavHeader(notPcm), null, 'not PCM');
  const eightBit = Buffer.from(good);
  eightBit.writeUInt16LE(8, 34);
  t.equal(parseWavHeader(eightBit), null, 'not 16-bit');
  const listChunk = Buffer.from(good);
  listChunk.write('LIST', 36, 'ascii');
  t.equal(parseWavHeader(listChunk), null, 'data chunk not at 36');
  t.end();
});
