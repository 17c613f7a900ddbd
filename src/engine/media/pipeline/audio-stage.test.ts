/** @module Tests of the pipeline stages: chaining, describe(), fan-out, resampling and close. */
import t from 'tap';
import { createResampler } from '../codecs/resample.js';
import type { AudioFrame } from './audio-frame.js';
import { CallbackSink, FanOutSink, ResampleStage } from './audio-stage.js';

t.test('docs/ARCHITECTURE.md "Agent media leg": a tap fans out to stages that wrap each other and describe the chain', async (t) => {
  const wide: AudioFrame[] = [];
  const narrow: number[] = [];
  const closed: string[] = [];
  const agent = new CallbackSink('agent-ws', (f) => wide.push({ ...f, pcm: f.pcm.slice() }));
  const recorder = new CallbackSink('recorder', (f) => narrow.push(f.pcm.length));
  const resample = new ResampleStage(await createResampler(8000, 16000), agent);
  const tap = new FanOutSink([recorder, resample]);
  t.equal(tap.describe(), 'fan-out[recorder | resample(8000→16000 Hz, speex q5) → agent-ws]');
  for (let i = 0; i < 3; i++) tap.writeFrame({ pcm: new Int16Array(160), sampleRate: 8000, timestamp: 1000 + i * 160, receivedAt: i * 20 });
  t.same(narrow, [160, 160, 160]);
  t.same(wide.map((f) => [f.pcm.length, f.sampleRate, f.timestamp]), [[320, 16000, 2000], [320, 16000, 2320], [320, 16000, 2640]]);
  t.throws(() => resample.writeFrame({ pcm: new Int16Array(320), sampleRate: 16000, timestamp: 0, receivedAt: 0 }), RangeError);
  const extra = new CallbackSink('extra', () => closed.push('extra'));
  tap.add(extra);
  tap.remove(extra);
  tap.close();
  tap.close();
  t.equal(tap.describe(), 'fan-out[]', 'close detaches and closes every consumer');
});
