/** @module Tests of the tap jitter buffer: reordering, concealment, late frames and resync. */
import t from 'tap';
import type { AudioFrame } from './audio-frame.js';
import { CallbackSink } from './audio-stage.js';
import { TapJitterBuffer } from './jitter-buffer.js';

function frameAt(seq: number, base = 1000, value = seq + 1): AudioFrame {
  return { pcm: new Int16Array(160).fill(value * 100), sampleRate: 8000, timestamp: (base + seq * 160) >>> 0, receivedAt: seq * 20 };
}

function collector(): { out: { ts: number; first: number; last: number }[]; sink: CallbackSink } {
  const out: { ts: number; first: number; last: number }[] = [];
  const sink = new CallbackSink('collect', (f) => out.push({ ts: f.timestamp, first: f.pcm[0] ?? 0, last: f.pcm[f.pcm.length - 1] ?? 0 }));
  return { out, sink };
}

t.test('RFC 3550 §5.1: frames reordered within the window come out in timestamp order', (t) => {
  const { out, sink } = collector();
  const jb = new TapJitterBuffer(sink, { depth: 3 });
  for (const seq of [0, 2, 1, 3, 5, 4, 6, 7, 8]) jb.writeFrame(frameAt(seq));
  jb.drain();
  t.same(out.map((f) => (f.ts - 1000) / 160), [0, 1, 2, 3, 4, 5, 6, 7, 8]);
  t.equal(jb.stats.concealed, 0);
  t.end();
});

t.test('a lost frame is concealed by a fading repeat of the last one; long losses fall silent', (t) => {
  const { out, sink } = collector();
  const jb = new TapJitterBuffer(sink, { depth: 2, maxConcealFrames: 2 });
  for (const seq of [0, 1, 2, 7, 8, 9]) jb.writeFrame(frameAt(seq));
  jb.drain();
  t.same(out.map((f) => (f.ts - 1000) / 160), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 'no hole in the timeline');
  t.equal(jb.stats.concealed, 4);
  const [c1, c2, c3] = [out[3]!, out[4]!, out[5]!];
  t.equal(c1.first, 300, 'the first repeat starts at full level');
  t.ok(c1.last < 300 && c1.last > 150, 'and fades across the frame');
  t.ok(c2.first <= 150 && c2.last <= 75, 'the second is quieter');
  t.same([c3.first, c3.last], [0, 0], 'after maxConcealFrames: silence');
  t.equal(out[6]!.first, 0, 'still silent');
  t.equal(out[7]!.first, 800, 'real audio resumes');
  t.end();
});

t.test('late and duplicate frames are dropped and counted', (t) => {
  const { out, sink } = collector();
  const jb = new TapJitterBuffer(sink, { depth: 1 });
  for (const seq of [0, 1, 2, 3]) jb.writeFrame(frameAt(seq));
  jb.writeFrame(frameAt(1)); // already played
  jb.writeFrame(frameAt(3)); // still held
  jb.drain();
  t.equal(out.length, 4);
  t.equal(jb.stats.late, 1);
  t.equal(jb.stats.duplicates, 1);
  t.end();
});

t.test('RFC 3550 §5.1: timestamps wrap modulo 2^32; a large jump resynchronises', (t) => {
  const { out, sink } = collector();
  const jb = new TapJitterBuffer(sink, { depth: 2 });
  const base = 0xffffffff - 160 * 2 + 1;
  for (const seq of [0, 2, 1, 3, 4]) jb.writeFrame(frameAt(seq, base));
  // A new source with a random timestamp base (a transfer): no 1 s of concealment.
  for (const seq of [0, 1, 2]) jb.writeFrame(frameAt(seq, 123456));
  jb.close();
  t.same(out.slice(0, 5).map((f) => ((f.ts - base) >>> 0) / 160), [0, 1, 2, 3, 4], 'in order across the wrap');
  t.equal(out.length, 8, 'nothing invented for the jump');
  t.equal(jb.stats.resyncs, 1);
  t.equal(jb.describe(), 'jitter(depth 2) → collect');
  t.end();
});
