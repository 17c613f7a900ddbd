/** @module Tests of the stream-to-call time map. */
import t from 'tap';
import { AudioTimeline, MAX_ANCHORS, REANCHOR_MS } from './audio-timeline.js';

t.test('continuous audio keeps one anchor; jitter within the window does not start another', (t) => {
  const line = new AudioTimeline();
  for (let i = 0; i < 100; i++) line.note(i * 20, 500 + i * 20 + (i % 2 === 1 ? 30 : 0));
  t.equal(line.anchors, 1);
  t.equal(line.callMsOf(1000), 1500);
  t.end();
});

t.test('a gap longer than the window (hold, RTP pause) starts an anchor; times after it land after the gap', (t) => {
  const line = new AudioTimeline();
  line.note(0, 0);
  line.note(980, 980);
  line.note(1000, 1000 + REANCHOR_MS + 4000);
  t.equal(line.anchors, 2);
  t.equal(line.callMsOf(500), 500, 'before the gap');
  t.equal(line.callMsOf(1500), 1500 + REANCHOR_MS + 4000, 'after it');
  t.equal(new AudioTimeline().callMsOf(700), 700, 'with no audio noted, stream time is call time');
  t.end();
});

t.test('anchors are bounded: a call with endless gaps cannot grow the map', (t) => {
  const line = new AudioTimeline();
  for (let i = 0; i < MAX_ANCHORS + 100; i++) line.note(i * 20, i * 1000);
  t.equal(line.anchors, MAX_ANCHORS);
  t.end();
});
