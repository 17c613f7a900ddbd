/** @module Tests of the WebRTC VAD wrapper (frame sizes, decisions on synthetic input, lifecycle). */
import t from 'tap';
import { WebRtcVad } from './webrtc-vad.js';

t.test('WebRTC VAD accepts 10, 20 and 30 ms frames at 8 and 16 kHz', async (t) => {
  for (const sampleRate of [8000, 16000] as const) {
    for (const frameMs of [10, 20, 30] as const) {
      const vad = await WebRtcVad.create({ sampleRate, frameMs });
      t.equal(vad.frameSamples, (sampleRate / 1000) * frameMs);
      t.equal(vad.isSpeech(new Int16Array(vad.frameSamples)), false, `${sampleRate} Hz ${frameMs} ms: digital silence is not speech`);
      vad.close();
    }
  }
});

t.test('WebRTC VAD rejects bad frames and settings, and use after close', async (t) => {
  await t.rejects(WebRtcVad.create({ sampleRate: 24000 as 16000, frameMs: 20 }), RangeError);
  await t.rejects(WebRtcVad.create({ sampleRate: 8000, frameMs: 25 as 20 }), RangeError);
  const vad = await WebRtcVad.create({ sampleRate: 8000, frameMs: 20, mode: 2 });
  t.equal(vad.describe(), 'webrtc-vad(mode 2, 8000 Hz, 20 ms)');
  t.throws(() => vad.isSpeech(new Int16Array(100)), RangeError);
  vad.reset();
  vad.close();
  vad.close();
  t.throws(() => vad.isSpeech(new Int16Array(160)));
});

t.test('WebRTC VAD flags a voiced, pitch-modulated signal and not the silence around it', async (t) => {
  const vad = await WebRtcVad.create({ sampleRate: 8000, frameMs: 20 });
  t.teardown(() => vad.close());
  const decisions: boolean[] = [];
  for (let f = 0; f < 100; f++) {
    const frame = new Int16Array(160);
    if (f >= 30 && f < 70) {
      // A crude vowel: harmonics of a 120-180 Hz glottal pitch with formant-like weights.
      for (let i = 0; i < 160; i++) {
        const n = f * 160 + i;
        const pitch = 120 + 60 * Math.sin(n / 4000);
        let s = 0;
        for (let h = 1; h <= 20; h++) s += Math.sin((2 * Math.PI * pitch * h * n) / 8000) * (h === 4 || h === 9 ? 1 : 0.25 / h);
        frame[i] = Math.round(s * 4000);
      }
    }
    decisions.push(vad.isSpeech(frame));
  }
  const voiced = decisions.slice(35, 70).filter(Boolean).length;
  const quiet = decisions.slice(0, 30).filter(Boolean).length;
  t.ok(voiced >= 30, `voiced frames flagged: ${voiced}/35`);
  t.equal(quiet, 0, 'leading silence not flagged');
});
