/** @module Tests of the agent audio conversions: chunk boundaries, re-chunking to 20 ms, unsupported formats. */
import t from 'tap';
import { ulawDecode, ulawEncode } from '../../../media/index.js';
import { AgentAudioDecoder, CallerAudioEncoder, checkAgentFormat } from './agent-audio-format.js';

const ramp = (n: number): Int16Array => Int16Array.from({ length: n }, (_, i) => (i * 97) % 30000 - 15000);

t.test('docs/API.md "Agent WebSocket protocol": pcm16 agent audio split at any byte, odd sizes included, decodes to the same samples', async (t) => {
  const got: number[] = [];
  const decoder = await AgentAudioDecoder.create({ encoding: 'pcm16', sampleRate: 8000 }, (pcm) => got.push(...pcm));
  const pcm = ramp(1000);
  const bytes = Buffer.from(pcm.buffer);
  const sizes = [1, 3, 2, 7, 1, 1, 999, 5];
  let at = 0;
  for (let i = 0; at < bytes.length; i++) {
    const n = sizes[i % sizes.length]!;
    decoder.push(bytes.subarray(at, at + n));
    at += n;
  }
  t.same(got, Array.from(pcm));
});

t.test('docs/API.md "Agent WebSocket protocol": clear forgets a split sample, so the next chunk starts on a sample boundary', async (t) => {
  const got: number[] = [];
  const decoder = await AgentAudioDecoder.create({ encoding: 'pcm16', sampleRate: 8000 }, (pcm) => got.push(...pcm));
  decoder.push(Buffer.from([0x01, 0x00, 0x02]));
  decoder.reset();
  decoder.push(Buffer.from([0x03, 0x00]));
  t.same(got, [1, 3]);
});

t.test('docs/API.md "Agent WebSocket protocol": µ-law agent audio in large chunks decodes in fixed slices without loss', async (t) => {
  const got: number[] = [];
  const decoder = await AgentAudioDecoder.create({ encoding: 'mulaw', sampleRate: 8000 }, (pcm) => got.push(...pcm));
  const bytes = Buffer.alloc(5000);
  ulawEncode(ramp(5000), bytes);
  decoder.push(bytes);
  const expected = new Int16Array(5000);
  ulawDecode(bytes, expected);
  t.same(got, Array.from(expected));
});

t.test('docs/API.md "Agent WebSocket protocol": caller audio is re-chunked into 20 ms frames whatever the packet time', async (t) => {
  const frames: Buffer[] = [];
  const encoder = await CallerAudioEncoder.create({ encoding: 'pcm16', sampleRate: 8000 }, (f) => frames.push(f));
  t.equal(encoder.takesG711, false);
  const pcm = ramp(240 * 4);
  for (let i = 0; i < 4; i++) encoder.pushPcm(pcm.subarray(i * 240, (i + 1) * 240));
  t.equal(frames.length, 6, '4 x 30 ms is 6 x 20 ms');
  t.ok(frames.every((f) => f.length === 320));
  t.same(Array.from(new Int16Array(Uint8Array.from(Buffer.concat(frames)).buffer)), Array.from(pcm));
  encoder.pushPcm(pcm.subarray(0, 100));
  encoder.reset();
  encoder.pushPcm(pcm.subarray(0, 160));
  t.equal(frames.length, 7, 'reset dropped the partial frame');
  t.same(Array.from(new Int16Array(Uint8Array.from(frames[6]!).buffer)), Array.from(pcm.subarray(0, 160)));
});

t.test('formats no agent link may declare are a bug, not a call outcome', (t) => {
  t.throws(() => checkAgentFormat({ encoding: 'pcm16', sampleRate: 11025 }), RangeError);
  t.throws(() => checkAgentFormat({ encoding: 'opus' as 'mulaw', sampleRate: 8000 }), RangeError);
  t.doesNotThrow(() => checkAgentFormat({ encoding: 'mulaw', sampleRate: 8000 }));
  t.end();
});
