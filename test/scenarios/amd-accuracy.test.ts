/**
 * Answering-machine detection measured (docs/PERFORMANCE.md "Answering-machine detection"): the
 * labelled set built by scripts/make-amd-fixtures.sh from flite, espeak-ng and sox (people
 * answering, voicemail greetings of several lengths with and without a beep, fax calling tones,
 * silence), each clip through the gateway's detector as a call's audio would go.
 */
import t from 'tap';
import { needPeer } from '../support/peers.js';
import { confusion, makeAmdFixtures, percentile, runAmd } from '../support/amd-fixtures.js';

t.test('docs/API.md "Answering-machine detection": at least 90 % right on 60+ labelled clips, median decision under 3.5 s', async (t) => {
  if (!needPeer(t, 'flite', 'espeak-ng', 'sox')) return;
  const clips = await makeAmdFixtures(t.testdir({}));
  t.ok(clips.length >= 60, `${clips.length} clips`);
  for (const label of ['human', 'machine', 'fax', 'unknown']) t.ok(clips.some((c) => c.label === label), `the set has ${label} clips`);
  const outcomes = await runAmd(clips);
  const right = outcomes.filter((o) => o.decision.result === o.label).length;
  const accuracy = right / outcomes.length;
  const median = percentile(outcomes.map((o) => o.decision.decidedAfterMs), 50);
  t.comment(JSON.stringify({ accuracy, median, confusion: confusion(outcomes) }));
  t.ok(accuracy >= 0.9, `accuracy ${(accuracy * 100).toFixed(1)} %`);
  t.ok(median < 3500, `median decision ${median} ms`);
});

t.test('docs/API.md "Answering-machine detection": the thresholds are the operator\'s: a shorter greeting limit calls more people machines', async (t) => {
  if (!needPeer(t, 'flite', 'espeak-ng', 'sox')) return;
  const clips = (await makeAmdFixtures(t.testdir({}))).filter((c) => c.label === 'human');
  const strict = await runAmd(clips, { maxHumanGreetingMs: 600 });
  t.ok(strict.filter((o) => o.decision.result === 'machine').length > clips.length / 2, 'most answers are longer than 600 ms');
});
