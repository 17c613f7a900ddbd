import t from 'tap';
import { GoertzelDtmfDetector } from './goertzel.js';

const KEYPAD: Record<string, [number, number]> = {
  '1': [697, 1209], '5': [770, 1336], '9': [852, 1477], '0': [941, 1336], '#': [941, 1477], D: [941, 1633],
};

/** Two tones at the given amplitudes for `ms`, then `gapMs` of silence, at 8 kHz. */
function tone(low: number, high: number, ms: number, ampLow = 6000, ampHigh = 6000, gapMs = 60): Int16Array {
  const n = (ms * 8000) / 1000;
  const out = new Int16Array(n + (gapMs * 8000) / 1000);
  for (let i = 0; i < n; i++) out[i] = Math.round(ampLow * Math.sin((2 * Math.PI * low * i) / 8000) + ampHigh * Math.sin((2 * Math.PI * high * i) / 8000));
  return out;
}

function detect(pcm: Int16Array, detector = new GoertzelDtmfDetector(), chunk = 160): string {
  let digits = '';
  for (let i = 0; i < pcm.length; i += chunk) digits += detector.process(pcm.subarray(i, i + chunk)) ?? '';
  return digits;
}

t.test('the detector takes PCM in chunks of any size: blocks span chunk boundaries and give the same digits', (t) => {
  const keys = ['1', '5', '5', '0', '#', 'D'];
  const pcm = Int16Array.from(keys.flatMap((k) => [...tone(...KEYPAD[k]!, 90)]));
  // A call reports at most one digit, so no chunk may hold two (keys here come every 150 ms).
  for (const chunk of [1, 7, 160, 205, 206, 1000]) t.equal(detect(pcm, new GoertzelDtmfDetector(), chunk), keys.join(''), `chunks of ${chunk}`);
  t.end();
});

t.test('ITU-T Q.24: each keypad pair of the 8 DTMF frequencies is detected once', (t) => {
  for (const [digit, [low, high]] of Object.entries(KEYPAD)) t.equal(detect(tone(low, high, 100)), digit, digit);
  const detector = new GoertzelDtmfDetector();
  const seq = ['1', '9', '9', '#'].map((d) => tone(...KEYPAD[d]!, 80));
  t.equal(seq.map((pcm) => detect(pcm, detector)).join(''), '199#', 'a repeated digit after a gap counts twice');
  t.end();
});

t.test('ITU-T Q.24: tones shorter than about 40 ms are not digits', (t) => {
  t.equal(detect(tone(697, 1209, 20)), '');
  t.end();
});

t.test('twist: high group 6 dB down is accepted, 10 dB down or 6 dB up is rejected', (t) => {
  t.equal(detect(tone(770, 1336, 100, 8000, 4000)), '5', '6 dB normal twist');
  t.equal(detect(tone(770, 1336, 100, 9000, 2846)), '', '10 dB normal twist');
  t.equal(detect(tone(770, 1336, 100, 3000, 6000)), '', '6 dB reverse twist');
  t.end();
});

t.test('energy: quiet tones, single tones, speech-like mixtures and noise are not digits', (t) => {
  t.equal(detect(tone(697, 1209, 100, 150, 150)), '', 'below the level threshold');
  t.equal(detect(tone(697, 697, 100, 6000, 0)), '', 'a single tone');
  const mix = tone(697, 1209, 100);
  const extra = tone(440, 2000, 100, 6000, 6000);
  t.equal(detect(mix.map((v, i) => Math.max(-32768, Math.min(32767, v + extra[i]!)))), '', 'energy outside the pair');
  let seed = 1;
  const noise = Int16Array.from({ length: 8000 }, () => ((seed = (seed * 16807) % 2147483647) % 20000) - 10000);
  t.equal(detect(noise), '', 'white noise');
  t.end();
});
