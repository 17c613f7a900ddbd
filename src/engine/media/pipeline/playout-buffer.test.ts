/** @module Tests of the agent playout buffer: pacing, underrun, bounds, barge-in flush and marks. */
import t from 'tap';
import type { AudioSource as PacedSource } from '../bridge/audio-source.js';
import { PlayoutBuffer, type MarkOutcome } from './playout-buffer.js';

/** A ramp, so every sample says where it came from. */
const ramp = (from: number, n: number): Int16Array => Int16Array.from({ length: n }, (_, i) => from + i);

t.test('docs/ARCHITECTURE.md "Agent media leg": audio faster than real time is paced out in 20 ms frames, in order', (t) => {
  const b = new PlayoutBuffer({ sampleRate: 8000 });
  b.push(ramp(0, 1000)); // 125 ms in one burst, 1000 = 6 frames + 40 samples
  t.equal(b.bufferedMs, 125);
  const seen: number[] = [];
  for (let i = 0; i < 6; i++) {
    const f = b.readFrame(i * 20);
    t.equal(f.pcm.length, 160);
    t.equal(f.timestamp, i * 160, 'timestamps advance by one frame');
    seen.push(...f.pcm);
  }
  t.same(seen, [...ramp(0, 960)], 'samples come out in order without loss');
  t.end();
});

t.test('docs/ARCHITECTURE.md "Agent media leg": an empty queue plays silence; a tail is held while audio keeps coming', (t) => {
  const b = new PlayoutBuffer();
  const silent = b.readFrame(0);
  t.ok(silent.pcm.every((s) => s === 0), 'underrun gives silence');
  t.equal(b.stats.underruns, 1);
  // Slower than real time: 100 samples per tick. The partial frame waits for more.
  b.push(ramp(1, 100));
  t.ok(b.readFrame(20).pcm.every((s) => s === 0), 'partial frame held while audio is arriving');
  b.push(ramp(101, 100));
  t.same([...b.readFrame(40).pcm], [...ramp(1, 160)], 'a full frame once enough arrived');
  // The agent stops: 40 samples left; the next tick with no new audio plays them padded.
  const tail = b.readFrame(60);
  t.same([...tail.pcm.subarray(0, 40)], [...ramp(161, 40)]);
  t.ok(tail.pcm.subarray(40).every((s) => s === 0), 'padded with silence');
  t.equal(b.bufferedMs, 0);
  t.end();
});

t.test('docs/ARCHITECTURE.md "Agent media leg": flush() drops queued audio at once for barge-in', (t) => {
  const marks: [string, MarkOutcome][] = [];
  const b = new PlayoutBuffer({ onMark: (name, outcome) => marks.push([name, outcome]) });
  b.push(ramp(0, 8000));
  b.mark('sentence-1');
  b.readFrame(0);
  b.flush();
  t.equal(b.bufferedMs, 0);
  t.equal(b.stats.flushedSamples, 8000 - 160);
  t.same(marks, [['sentence-1', 'flushed']], 'pending marks report that they were flushed');
  t.ok(b.readFrame(20).pcm.every((s) => s === 0), 'silence right after the flush');
  b.push(ramp(5, 160));
  t.same([...b.readFrame(40).pcm], [...ramp(5, 160)], 'new audio after a flush plays at once');
  t.end();
});

t.test('docs/ARCHITECTURE.md "Agent media leg": a mark fires when the audio queued before it has been played', (t) => {
  const marks: string[] = [];
  const b = new PlayoutBuffer({ onMark: (name, outcome) => marks.push(`${name}:${outcome}`) });
  b.push(ramp(0, 320));
  b.mark('a');
  b.push(ramp(0, 200));
  b.mark('b');
  b.readFrame(0);
  t.same(marks, [], 'nothing after the first frame');
  b.readFrame(20);
  t.same(marks, ['a:played'], 'a fires with the frame that finishes its audio');
  b.readFrame(40);
  t.same(marks, ['a:played'], 'b waits for its last 40 samples');
  b.readFrame(60); // nothing was pushed since the last tick: the tail is played
  t.same(marks, ['a:played', 'b:played']);
  b.mark('c');
  b.readFrame(80);
  t.same(marks, ['a:played', 'b:played', 'c:played'], 'a mark on an empty queue fires on the next tick');
  t.end();
});

t.test('docs/ARCHITECTURE.md "Agent media leg": the queue is bounded; the oldest audio is dropped', (t) => {
  const marks: string[] = [];
  const b = new PlayoutBuffer({ maxQueueMs: 100, onMark: (name, outcome) => marks.push(`${name}:${outcome}`) });
  b.push(ramp(0, 400));
  b.mark('early');
  b.push(ramp(400, 800)); // 150 ms total into a 100 ms queue
  t.equal(b.bufferedMs, 100);
  t.equal(b.stats.overflowSamples, 400);
  t.same(marks, ['early:overflowed']);
  t.equal(b.readFrame(0).pcm[0], 400, 'playback resumes at the oldest audio kept');
  b.push(ramp(0, 5000));
  t.equal(b.bufferedMs, 100, 'a push larger than the queue keeps its newest 100 ms');
  t.equal(b.readFrame(20).pcm[0], 4200);
  t.throws(() => b.writeFrame({ pcm: new Int16Array(320), sampleRate: 16000, timestamp: 0, receivedAt: 0 }), RangeError);
  t.end();
});

t.test('the ring wraps without losing or reordering samples', (t) => {
  const b = new PlayoutBuffer({ maxQueueMs: 50 }); // 400 samples: wraps every 2.5 frames
  let next = 0;
  let expect = 0;
  for (let tick = 0; tick < 100; tick++) {
    b.push(ramp(next, 160));
    next += 160;
    const f = b.readFrame(tick * 20);
    if (f.pcm[0] !== expect || f.pcm[159] !== expect + 159) t.fail(`tick ${tick}`);
    expect += 160;
  }
  t.equal(b.stats.framesPlayed, 100);
  t.match(b.describe(), /playout\(8000 Hz/);
  t.end();
});

t.test('the playout buffer is an AudioSource the pacer can pull like hold music', (t) => {
  const b = new PlayoutBuffer();
  const paced: PacedSource = b; // what the bridge's pacer and hold-music player pull from
  const out = new Int16Array(160);
  t.equal(paced.read(out), 160, 'an empty queue still yields a full frame of silence');
  b.push(ramp(7, 160));
  t.equal(b.read(out), 160);
  t.same([...out], [...ramp(7, 160)]);
  t.end();
});

t.test('the ring starts small and grows without reordering queued audio, also after it wrapped', (t) => {
  const buffer = new PlayoutBuffer({ sampleRate: 8000, maxQueueMs: 60_000 });
  const start = buffer.capacitySamples;
  t.ok(start <= 16000, 'a new buffer holds about 2 s, not the 60 s maximum');
  let next = 0;
  const push = (n: number): void => {
    const pcm = new Int16Array(n);
    for (let i = 0; i < n; i++) pcm[i] = (next++ % 30000);
    buffer.push(pcm);
  };
  let expected = 0;
  const out = new Int16Array(160);
  const readAndCheck = (frames: number): boolean => {
    for (let f = 0; f < frames; f++) {
      buffer.read(out);
      for (const v of out) if (v !== expected++ % 30000) return false;
    }
    return true;
  };
  push(12000);
  t.ok(readAndCheck(50), 'first second plays in order');
  push(40000); // wraps the 2 s ring and needs more than it holds
  t.ok(buffer.capacitySamples > start, 'the ring grew');
  t.ok(readAndCheck((12000 + 40000) / 160 - 50), 'everything queued before and after the growth plays in order');
  t.equal(buffer.stats.overflowSamples, 0, 'nothing was dropped');
  t.end();
});
