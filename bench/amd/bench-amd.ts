/**
 * `npm run bench:amd`: answering-machine detection over the labelled set of
 * scripts/make-amd-fixtures.sh; prints the confusion matrix and the decision-time percentiles and,
 * with `--write`, puts them in docs/PERFORMANCE.md ("Answering-machine detection").
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AMD_RESULTS, confusion, makeAmdFixtures, percentile, runAmd } from '../../test/support/amd-fixtures.js';
import { writeSection } from '../performance-doc.js';

const dir = mkdtempSync(join(tmpdir(), 'vgw-amd-'));
try {
  const clips = await makeAmdFixtures(dir);
  const outcomes = await runAmd(clips);
  const m = confusion(outcomes);
  const right = outcomes.filter((o) => o.decision.result === o.label).length;
  const times = outcomes.map((o) => o.decision.decidedAfterMs);
  const rows = AMD_RESULTS.map((label) => `| ${label} | ${AMD_RESULTS.map((r) => m[label][r]).join(' | ')} |`);
  const byLabel = AMD_RESULTS.map((label) => {
    const mine = outcomes.filter((o) => o.label === label).map((o) => o.decision.decidedAfterMs);
    return `| ${label} | ${mine.length} | ${percentile(mine, 50)} | ${percentile(mine, 90)} | ${Math.max(...mine)} |`;
  });
  const section = [
    '## Answering-machine detection',
    '',
    `\`npm run bench:amd\` (bench/amd/bench-amd.ts) over the ${outcomes.length} labelled clips of scripts/make-amd-fixtures.sh`,
    '(flite and espeak-ng voices, sox tones and noise; 8 kHz), each through a fresh detector with the default thresholds,',
    'as the callee\'s audio from the answer on. Accuracy and decision time are a property of the set and the thresholds,',
    'not of the machine, so the figures repeat on any host.',
    '',
    `Accuracy: ${right}/${outcomes.length} (${((right / outcomes.length) * 100).toFixed(1)} %). Decision time after the answer: p50 ${percentile(times, 50)} ms, p90 ${percentile(times, 90)} ms, max ${Math.max(...times)} ms.`,
    '',
    `| label \\ result | ${AMD_RESULTS.join(' | ')} |`,
    `|---|${AMD_RESULTS.map(() => '---').join('|')}|`,
    ...rows,
    '',
    '| label | clips | p50 ms | p90 ms | max ms |',
    '|---|---|---|---|---|',
    ...byLabel,
    '',
    'People are decided once their answer is followed by 800 ms of silence; machines once the greeting passes 2.6 s; fax',
    'after 300 ms of the 1100 Hz calling tone; silence after 4.5 s (`unknown`). The set is synthetic speech with clean',
    'pauses: real answers (crosstalk, background voices, greetings read fast) will score lower, and the thresholds are',
    'configuration (docs/CONFIGURATION.md "Answering-machine detection") for tuning on an operator\'s own recordings.',
  ].join('\n');
  process.stdout.write(`${section}\n`);
  if (process.argv.includes('--write')) writeSection('## Answering-machine detection', section);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
