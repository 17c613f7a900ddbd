/** @module ITU-T Q.23 key generation, checked by the gateway's own Q.24 detector (goertzel.ts). */
import t from 'tap';
import { DTMF_FREQUENCIES, dtmfTone } from './dtmf-tones.js';
import { GoertzelDtmfDetector } from './goertzel.js';

function detect(pcm: Int16Array): string {
  const detector = new GoertzelDtmfDetector();
  let heard = '';
  for (let i = 0; i < pcm.length; i += 160) heard += detector.process(pcm.subarray(i, i + 160)) ?? '';
  return heard;
}

t.test('ITU-T Q.23: every key, 70 ms on and 50 ms off, is heard once each and in order by the Q.24 detector', (t) => {
  const keys = '0123456789*#ABCD';
  const pcm = Int16Array.from([...keys].flatMap((k) => [...dtmfTone(k)]));
  t.equal(pcm.length, 16 * 960, '120 ms per key at 8 kHz');
  t.equal(detect(pcm), keys);
  t.equal(detect(Int16Array.from([...dtmfTone('5'), ...dtmfTone('5')])), '55', 'a key repeated is heard twice: the pause separates them');
  t.end();
});

t.test('ITU-T Q.23: the two tones are the key\'s row and column, the high group louder by the twist, and the silence silent', (t) => {
  const pcm = dtmfTone('#', { twistDb: 2 });
  const power = (f: number, from: number, to: number) => {
    let re = 0, im = 0;
    for (let i = from; i < to; i++) {
      re += pcm[i]! * Math.cos((2 * Math.PI * f * i) / 8000);
      im += pcm[i]! * Math.sin((2 * Math.PI * f * i) / 8000);
    }
    return re * re + im * im;
  };
  const [low, high] = DTMF_FREQUENCIES['#']!;
  t.same([low, high], [941, 1477]);
  const twist = 10 * Math.log10(power(high, 0, 560) / power(low, 0, 560));
  t.ok(twist > 1.5 && twist < 2.5, `high group ${twist.toFixed(2)} dB above the low group`);
  t.ok(pcm.subarray(560).every((s) => s === 0), '50 ms of silence after the 70 ms tone');
  t.ok(Math.max(...pcm.map(Math.abs)) < 32767, 'no clipping');
  t.throws(() => dtmfTone('x'), RangeError);
  t.end();
});
