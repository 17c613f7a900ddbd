import t from 'tap';
import { eModelRating, G711_PLC, mosFromRating } from './e-model.js';

t.test('G.107 §7 Table 3: the default values give R = 93.2 and MOS 4.41 (G.107 Annex B)', (t) => {
  const R = eModelRating();
  t.ok(Math.abs(R - 93.2) < 0.05, `R = ${R.toFixed(3)}`);
  t.ok(Math.abs(mosFromRating(R) - 4.41) < 0.005, `MOS = ${mosFromRating(R).toFixed(3)}`);
  t.end();
});

t.test('G.107 Annex B: MOS is 1 at or below R = 0, 4.5 at or above 100, and rises with R', (t) => {
  t.equal(mosFromRating(-5), 1);
  t.equal(mosFromRating(0), 1);
  t.equal(mosFromRating(100), 4.5);
  t.equal(mosFromRating(120), 4.5);
  t.ok(mosFromRating(50) < mosFromRating(70) && mosFromRating(70) < mosFromRating(90));
  t.end();
});

t.test('G.107 §7.2.4 with G.113 Appendix I G.711 + PLC (Bpl 25.1): Ie,eff = 95·Ppl/(Ppl + 25.1) for random loss', (t) => {
  const clean = eModelRating({ ...G711_PLC });
  for (const Ppl of [1, 5, 10]) {
    const expected = clean - (95 * Ppl) / (Ppl + 25.1);
    const R = eModelRating({ ...G711_PLC, Ppl });
    t.ok(Math.abs(R - expected) < 1e-9, `Ppl ${Ppl}%: R ${R.toFixed(2)}`);
  }
  // 10 % random loss on G.711 with PLC: R ≈ 93.2 − 27.1 ≈ 66.1.
  t.ok(Math.abs(eModelRating({ ...G711_PLC, Ppl: 10 }) - 66.1) < 0.1);
  t.end();
});

t.test('G.107 §7.2.3: an absolute delay above 100 ms lowers R (Idd), 400 ms by more than 150 ms', (t) => {
  const R0 = eModelRating();
  const R150 = eModelRating({ T: 150, Ta: 150, Tr: 300 });
  const R400 = eModelRating({ T: 400, Ta: 400, Tr: 800 });
  t.ok(R150 < R0 && R400 < R150, `R ${R0.toFixed(1)} > ${R150.toFixed(1)} > ${R400.toFixed(1)}`);
  t.end();
});
