/** @module Tests of the streaming resampler: round-trip SNR, block lengths and frequency preservation. */
import t from 'tap';
import { createResampler, SUPPORTED_RATES, type Resampler } from './resample.js';

function sine(rate: number, hz: number, seconds: number, amplitude = 10000): Int16Array {
  const out = new Int16Array(rate * seconds);
  for (let i = 0; i < out.length; i++) out[i] = Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / rate));
  return out;
}

/** Runs `input` through `r` in 20 ms blocks, as the pacer would, and joins the output. */
function stream(r: Resampler, input: Int16Array): Int16Array {
  const block = r.inputRate / 50;
  const parts: Int16Array[] = [];
  for (let i = 0; i + block <= input.length; i += block) parts.push(r.process(input.subarray(i, i + block)).slice());
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** SNR in dB of `y` against `x`, after finding the lag (filter delay) that best aligns them. */
function alignedSnr(x: Int16Array, y: Int16Array, skip: number): { snr: number; lag: number } {
  let best = { lag: 0, corr: -Infinity };
  for (let lag = 0; lag < 400; lag++) {
    let corr = 0;
    for (let i = skip; i < x.length - 400; i++) corr += (x[i] ?? 0) * (y[i + lag] ?? 0);
    if (corr > best.corr) best = { lag, corr };
  }
  let signal = 0;
  let noise = 0;
  for (let i = skip; i < x.length - 400; i++) {
    const s = x[i] ?? 0;
    const e = s - (y[i + best.lag] ?? 0);
    signal += s * s;
    noise += e * e;
  }
  return { snr: 10 * Math.log10(signal / Math.max(noise, 1e-9)), lag: best.lag };
}

t.test('docs/ARCHITECTURE.md "Agent media leg": a sine through 8k→16k→8k keeps an SNR of at least 40 dB', async (t) => {
  // Frequencies that share no period with the 10 ms delay, so only the true lag aligns.
  for (const hz of [333, 1004, 3011]) {
    const up = await createResampler(8000, 16000);
    const down = await createResampler(16000, 8000);
    t.teardown(() => {
      up.close();
      down.close();
    });
    const x = sine(8000, hz, 2);
    const y = stream(down, stream(up, x));
    const { snr, lag } = alignedSnr(x, y, 800);
    t.ok(snr >= 40, `${hz} Hz: SNR ${snr.toFixed(1)} dB after aligning ${lag} samples of delay`);
    t.equal(lag, Math.round(up.delaySamples / 2 + down.delaySamples), 'the measured lag is the filters\' reported delay');
  }
});

t.test('every supported pair turns 20 ms in into 20 ms out and keeps the tone\'s frequency', async (t) => {
  for (const from of SUPPORTED_RATES) {
    for (const to of SUPPORTED_RATES) {
      const r = await createResampler(from, to);
      t.teardown(() => r.close());
      const lengths = new Set<number>();
      const x = sine(from, 1000, 1);
      const block = from / 50;
      for (let i = 0; i < x.length; i += block) lengths.add(r.process(x.subarray(i, i + block)).length);
      t.same([...lengths], [to / 50], `${from}→${to}: every block gives ${to / 50} samples`);
      const y = stream(r, x);
      t.ok(Math.abs(zeroCrossingHz(y.subarray(to / 10), to) - 1000) < 5, `${from}→${to}: 1 kHz stays 1 kHz`);
    }
  }
});

function zeroCrossingHz(pcm: Int16Array, rate: number): number {
  let crossings = 0;
  for (let i = 1; i < pcm.length; i++) if ((pcm[i - 1] ?? 0) < 0 && (pcm[i] ?? 0) >= 0) crossings++;
  return (crossings * rate) / pcm.length;
}

t.test('blocks of any length are accepted and state carries across them', async (t) => {
  const r = await createResampler(8000, 48000);
  t.teardown(() => r.close());
  const x = sine(8000, 440, 1);
  let produced = 0;
  for (let i = 0, n = 7; i < x.length; i += n, n = (n * 7) % 331 + 1) produced += r.process(x.subarray(i, i + n)).length;
  t.ok(Math.abs(produced - 48000) <= 6, `1 s in gives 1 s out (${produced} samples)`);
  t.equal(r.process(new Int16Array(5000)).length, 30000, 'a block larger than the initial buffer grows it');
  t.match(r.describe(), /8000→48000/);
});

t.test('equal rates pass through, unsupported rates and use after close throw', async (t) => {
  const same = await createResampler(16000, 16000);
  const x = sine(16000, 440, 0.02);
  t.equal(same.process(x), x, 'pass-through returns the very block');
  await t.rejects(createResampler(8000, 11025), RangeError);
  await t.rejects(createResampler(8000, 16000, { quality: 11 }), RangeError);
  const r = await createResampler(8000, 16000);
  r.close();
  r.close();
  t.throws(() => r.process(x));
});
