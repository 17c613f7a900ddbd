/** @module VAD precision and recall on a labelled flite/sox fixture, and the stage's speech events. */
import t from 'tap';
import { needPeer, tempWorkdir } from '../../../../test/support/peers.js';
import { buildChangingFloorFixture, buildVadFixture, frameLabels, scoreCounts, scoreDecisions, type Counts, type LabelledAudio } from '../../../../test/fixtures/vad-fixture.js';
import { VadStage, type VadEvent } from './vad-stage.js';
import { WebRtcVad, type VadFrameMs } from './webrtc-vad.js';

/** Target frame-level F1 (docs/ARCHITECTURE.md "Agent media leg") of the VAD on the labelled fixture. */
const TARGET_F1 = 0.9;

async function frameScore(calls: LabelledAudio[], frameMs: VadFrameMs): Promise<ReturnType<typeof scoreCounts>> {
  const total: Counts = { tp: 0, fp: 0, fn: 0 };
  for (const call of calls) {
    // One VAD per call, as in production: its noise estimate belongs to that call's line.
    const vad = await WebRtcVad.create({ sampleRate: call.sampleRate as 8000 | 16000, frameMs });
    const n = vad.frameSamples;
    const predicted: boolean[] = [];
    for (let i = 0; i + n <= call.pcm.length; i += n) predicted.push(vad.isSpeech(call.pcm.subarray(i, i + n)));
    vad.close();
    const s = scoreDecisions(frameLabels(call, n), predicted);
    total.tp += s.tp;
    total.fp += s.fp;
    total.fn += s.fn;
  }
  return scoreCounts(total);
}

t.test('docs/ARCHITECTURE.md "Agent media leg": WebRTC VAD frame-level F1 ≥ 0.9 on flite speech over silence, white and pink noise', async (t) => {
  if (!needPeer(t, 'flite', 'sox')) return;
  const dir = tempWorkdir(t, 'vgw-vad-');
  for (const rate of [8000, 16000] as const) {
    const calls = buildVadFixture(dir, rate);
    for (const frameMs of [10, 20, 30] as const) {
      const s = await frameScore(calls, frameMs);
      const figures = `precision ${s.precision.toFixed(3)} recall ${s.recall.toFixed(3)} F1 ${s.f1.toFixed(3)} (${s.tp + s.fn} speech frames)`;
      t.ok(s.f1 >= TARGET_F1, `${rate} Hz, ${frameMs} ms frames, mode 3: ${figures}`);
    }
  }
});

t.test('docs/ARCHITECTURE.md "Agent media leg": WebRTC VAD F1 ≥ 0.9 on a line whose noise floor rises, steps up or steps down mid-call', async (t) => {
  if (!needPeer(t, 'flite', 'sox')) return;
  const dir = tempWorkdir(t, 'vgw-vad-');
  for (const rate of [8000, 16000] as const) {
    const calls = buildChangingFloorFixture(dir, rate);
    // Per call for the record; the target holds on the pooled frames, as for the steady lines.
    for (const call of calls) {
      const s = await frameScore([call], 20);
      t.comment(`${rate} Hz ${call.segments[0]?.line}: precision ${s.precision.toFixed(3)} recall ${s.recall.toFixed(3)} F1 ${s.f1.toFixed(3)}`);
    }
    const s = await frameScore(calls, 20);
    t.ok(s.f1 >= TARGET_F1, `${rate} Hz, 20 ms frames, pooled: precision ${s.precision.toFixed(3)} recall ${s.recall.toFixed(3)} F1 ${s.f1.toFixed(3)}`);
  }
});

t.test('docs/ARCHITECTURE.md "Agent media leg": the VAD stage emits one speech-start and one speech-stop per utterance', async (t) => {
  if (!needPeer(t, 'flite', 'sox')) return;
  const dir = tempWorkdir(t, 'vgw-vad-');
  for (const call of buildVadFixture(dir, 8000)) {
    const events: VadEvent[] = [];
    const stage = new VadStage(await WebRtcVad.create({ sampleRate: 8000, frameMs: 20 }), { onEvent: (e) => events.push(e) });
    const base = 90000;
    for (let i = 0; i + 160 <= call.pcm.length; i += 160) {
      stage.writeFrame({ pcm: call.pcm.subarray(i, i + 160), sampleRate: 8000, timestamp: base + i, receivedAt: i / 8 });
    }
    stage.close();
    const line = call.segments[0]?.line ?? '?';
    const utterances = call.segments.filter((s) => s.kind === 'speech');
    t.same(events.map((e) => e.type), utterances.flatMap(() => ['speech-start', 'speech-stop']), `${line}: start/stop pairs`);
    utterances.forEach((u, k) => {
      const start = events[2 * k];
      const stop = events[2 * k + 1];
      if (!start || !stop) return;
      const startErrMs = (start.timestamp - base - u.start) / 8;
      const stopErrMs = (stop.timestamp - base - u.end) / 8;
      t.ok(Math.abs(startErrMs) <= 100, `${line} utterance ${k + 1}: start within 100 ms (${startErrMs.toFixed(0)} ms)`);
      t.ok(Math.abs(stopErrMs) <= 250, `${line} utterance ${k + 1}: stop within 250 ms (${stopErrMs.toFixed(0)} ms)`);
      t.ok(stop.at - (stop.timestamp - base) / 8 >= 400 - 20, 'speech-stop is announced after the hangover');
    });
  }
});

t.test('VAD stage cuts frames of any length into VAD frames and rejects other rates', async (t) => {
  const events: VadEvent[] = [];
  const stage = new VadStage(await WebRtcVad.create({ sampleRate: 16000, frameMs: 30 }), { onsetMs: 30, hangoverMs: 90, onEvent: (e) => events.push(e) });
  t.match(stage.describe(), /vad-events\(webrtc-vad\(mode 3, 16000 Hz, 30 ms\)\)/);
  t.equal(stage.isSpeaking, false);
  for (let i = 0; i < 50; i++) stage.writeFrame({ pcm: new Int16Array(333), sampleRate: 16000, timestamp: i * 333, receivedAt: 0 });
  t.same(events, [], 'silence in odd-sized blocks raises nothing');
  t.throws(() => stage.writeFrame({ pcm: new Int16Array(160), sampleRate: 8000, timestamp: 0, receivedAt: 0 }), RangeError);
  stage.close();
});
