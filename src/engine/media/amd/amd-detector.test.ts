/** @module The detector's rules on synthetic frames (docs/API.md "Answering-machine detection"); the measured set is test/scenarios/amd-accuracy.test.ts. */
import t from 'tap';
import { AmdDetector, type AmdDecision } from './amd-detector.js';
import { nextAmdState } from './amd-state.js';

/** 20 ms frames: `speech` marks the frames the fake VAD calls speech; `tone` fills them with a sine. */
function run(frames: { speech: boolean; tone?: number }[]): { decision: AmdDecision | null; beeps: number[] } {
  let decision: AmdDecision | null = null;
  const beeps: number[] = [];
  let i = 0;
  const detector = new AmdDetector({ isSpeech: () => frames[i]!.speech, onDecision: (d) => { decision = d; }, onBeep: (at) => beeps.push(at) });
  for (; i < frames.length; i++) {
    const f = frames[i]!;
    detector.write(Int16Array.from({ length: 160 }, (_, n) => (f.tone ? Math.round(8000 * Math.sin((2 * Math.PI * f.tone * (i * 160 + n)) / 8000)) : 0)));
  }
  return { decision, beeps };
}
const ms = (n: number, frame: { speech: boolean; tone?: number }) => Array.from({ length: n / 20 }, () => frame);

t.test('a short greeting then silence is human; a greeting past the limit is machine; silence is unknown; 1100 Hz is fax', (t) => {
  t.match(run([...ms(400, { speech: false }), ...ms(800, { speech: true }), ...ms(2000, { speech: false })]).decision, { result: 'human', decidedAfterMs: 2000 });
  t.match(run([...ms(300, { speech: false }), ...ms(4000, { speech: true })]).decision, { result: 'machine' });
  t.match(run(ms(6000, { speech: false })).decision, { result: 'unknown', decidedAfterMs: 4500 });
  t.match(run([...ms(200, { speech: false }), ...ms(600, { speech: false, tone: 1100 })]).decision, { result: 'fax', decidedAfterMs: 500 });
  t.end();
});

t.test('a beep after the decision is dated; the first decision stands', (t) => {
  const r = run([...ms(300, { speech: false }), ...ms(3000, { speech: true }), ...ms(400, { speech: false }), ...ms(400, { speech: false, tone: 1000 })]);
  t.match(r.decision, { result: 'machine', beepAtMs: 3700 });
  t.same(r.beeps, [3700]);
  t.throws(() => nextAmdState('decided', 'decide'), 'docs/ARCHITECTURE.md "State machines": a second decision is a bug');
  t.end();
});
