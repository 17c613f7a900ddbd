/** @module A whole tap pipeline on flite speech: G.711, reordering and loss, jitter buffer, recording and VAD. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { FakeClock } from '../../../common/clock.js';
import { needPeer, tempWorkdir } from '../../../../test/support/peers.js';
import { buildVadFixture } from '../../../../test/fixtures/vad-fixture.js';
import { ulawDecode, ulawEncode } from '../codecs/g711.js';
import { StereoWavRecorder } from '../recording/stereo-recorder.js';
import { VadStage, type VadEvent } from '../vad/vad-stage.js';
import { WebRtcVad } from '../vad/webrtc-vad.js';
import type { AudioFrame } from './audio-frame.js';
import { FanOutSink } from './audio-stage.js';
import { TapJitterBuffer } from './jitter-buffer.js';
import { PlayoutBuffer } from './playout-buffer.js';


/** Best normalised cross-correlation of `b` against `a` over lags 0..maxLag. */
function bestCorrelation(a: Int16Array, b: Int16Array, maxLag: number): { r: number; lag: number } {
  let best = { r: -1, lag: 0 };
  const n = Math.min(a.length, b.length) - maxLag;
  for (let lag = 0; lag <= maxLag; lag += 1) {
    let ab = 0;
    let aa = 0;
    let bb = 0;
    for (let i = 0; i < n; i += 2) {
      const x = a[i] ?? 0;
      const y = b[i + lag] ?? 0;
      ab += x * y;
      aa += x * x;
      bb += y * y;
    }
    const r = ab / Math.sqrt(aa * bb || 1);
    if (r > best.r) best = { r, lag };
  }
  return best;
}

/**
 * G.711 frames of `pcm` in arrival order, sent every 20 ms: every 7th frame is delayed 30 ms, so
 * it arrives after the next one, and every 50th is lost.
 */
function networkFrames(pcm: Int16Array): { seq: number; pcm: Int16Array; arrival: number }[] {
  const frames: { seq: number; pcm: Int16Array; arrival: number }[] = [];
  const ulaw = Buffer.alloc(160);
  for (let seq = 0; (seq + 1) * 160 <= pcm.length; seq++) {
    ulawEncode(pcm.subarray(seq * 160, (seq + 1) * 160), ulaw);
    const decoded = new Int16Array(160);
    ulawDecode(ulaw, decoded);
    if (seq % 50 !== 25) frames.push({ seq, pcm: decoded, arrival: (seq + 1) * 20 + (seq % 7 === 3 ? 30 : 0) });
  }
  return frames.sort((a, b) => a.arrival - b.arrival);
}

t.test('docs/ARCHITECTURE.md "Agent media leg": speech through loss and reordering is recorded in stereo and detected', async (t) => {
  if (!needPeer(t, 'flite', 'sox')) return;
  const dir = tempWorkdir(t, 'vgw-tap-');
  const [caller, agentLine] = buildVadFixture(dir, 8000);
  if (!caller || !agentLine) throw new Error('fixture has too few sections');
  const clock = new FakeClock();
  const recorder = await StereoWavRecorder.open({ path: join(dir, 'call.wav'), clock });
  const events: VadEvent[] = [];
  const vad = new VadStage(await WebRtcVad.create({ sampleRate: 8000, frameMs: 20 }), { onEvent: (e) => events.push(e) });
  const jitter = new TapJitterBuffer(new FanOutSink([recorder.channelSink('remote'), vad]), { depth: 3 });
  t.equal(jitter.describe(), 'jitter(depth 3) → fan-out[record(remote → ' + join(dir, 'call.wav') + ') | vad-events(webrtc-vad(mode 3, 8000 Hz, 20 ms))]');

  // The agent's reply arrives all at once, far faster than real time, and is paced out.
  const playout = new PlayoutBuffer();
  playout.push(agentLine.pcm);
  const agentTap = recorder.channelSink('agent');

  let tick = 0;
  for (const f of networkFrames(caller.pcm)) {
    // The pacer ticks every 20 ms whatever the network does.
    for (; (tick + 1) * 20 <= f.arrival; tick++) {
      clock.advance((tick + 1) * 20 - clock.monotonic());
      if (tick < agentLine.pcm.length / 160) agentTap.writeFrame(playout.readFrame(clock.monotonic()));
    }
    clock.advance(f.arrival - clock.monotonic());
    const frame: AudioFrame = { pcm: f.pcm, sampleRate: 8000, timestamp: 5000 + f.seq * 160, receivedAt: clock.monotonic() };
    jitter.writeFrame(frame);
  }
  jitter.close();
  const meta = await recorder.close();

  const file = readFileSync(join(dir, 'call.wav'));
  const stereo = new Int16Array(file.buffer.slice(file.byteOffset + 44, file.byteOffset + file.length));
  const left = stereo.filter((_, i) => i % 2 === 0);
  const right = stereo.filter((_, i) => i % 2 === 1);
  const remote = bestCorrelation(caller.pcm, left, 800);
  const agent = bestCorrelation(agentLine.pcm, right, 800);
  t.ok(remote.r > 0.9, `left channel is the caller's speech (r = ${remote.r.toFixed(3)} at ${remote.lag / 8} ms)`);
  t.ok(agent.r > 0.99, `right channel is the agent's speech (r = ${agent.r.toFixed(3)} at ${agent.lag / 8} ms)`);
  t.equal(jitter.stats.concealed, Math.floor(caller.pcm.length / 160 / 50), 'each lost frame was concealed');
  t.equal(jitter.stats.late, 0, 'every reordered frame was in time');
  t.same(events.map((e) => e.type), ['speech-start', 'speech-stop', 'speech-start', 'speech-stop'], 'two utterances detected');
  t.equal(meta.lateSamplesDropped, 0);
});
