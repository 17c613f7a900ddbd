/**
 * Comments, test names and docs cite docs/ sections by name or anchor, and each resolves to a
 * real heading; none cites a numbered contract section or an issue (README.md "Documentation").
 */
import t from 'tap';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { anchorsOf, checkedFiles, checkText, type BadReference } from './doc-references.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SELF = ['test/support/doc-references.ts', 'test/support/doc-references.test.ts'];

const whys = (bad: BadReference[]): string[] => bad.map((b) => `${b.line}: ${b.why}`);

t.test('a citation of a numbered contract section or an issue is refused, also wrapped across comment lines', (t) => {
  const text = [
    '/** Hold (contract section 4). */',
    "t.test('contract 7: a payload is ignored', () => {});",
    '// Target of issue 4 item 7.',
    ' * recognizer (issue',
    ' * "inbound calls": transcription).',
    '-- Idempotency-Key (contract sections 2 and 4)',
    " * WebSocket speaking the contract's protocol (sections 4 and 5).",
  ].join('\n');
  t.same(whys(checkText(ROOT, 'src/x.ts', text)), [
    '1: cites a numbered contract section; cite the docs/ section by name',
    '2: cites a numbered contract section; cite the docs/ section by name',
    '6: cites a numbered contract section; cite the docs/ section by name',
    '7: cites a numbered contract section; cite the docs/ section by name',
    '3: cites an issue number; cite the docs/ section by name',
    '4: cites an issue by title; cite the docs/ section by name',
  ]);
  t.same(checkText(ROOT, 'src/x.ts', '/** The verify contract every adapter passes; a contract test. */'), [], 'the word alone is fine');
  t.end();
});

t.test('a docs/ section cited by name must be a heading (or a bold lead) of that file', (t) => {
  t.same(checkText(ROOT, 'src/x.ts', '// docs/API.md "Calls" and "Agent WebSocket protocol", README.md "Tests"'), []);
  t.same(whys(checkText(ROOT, 'src/x.ts', '// docs/API.md "Calls" and "Hold music"')), ['1: docs/API.md has no heading or bold lead "Hold music"']);
  t.same(whys(checkText(ROOT, 'src/x.ts', '// docs/NOPE.md "Calls"')), ['1: no file docs/NOPE.md']);
  t.same(checkText(ROOT, 'docs/API.md', 'see WEBHOOKS.md "Attribution"'), [], 'docs cite each other without the folder');
  t.same(checkText(ROOT, 'src/x.ts', '// docs/DECISIONS.md "Hold and media direction"'), [], 'a bold lead names a decision');
  t.same(checkText(ROOT, 'src/x.ts', '// docs/PERFORMANCE.md "Media AI path (npm run bench:media)"'), [], 'code marks in a heading may be left out');
  t.end();
});

t.test('an anchor must be the GitHub anchor of a heading of that file', (t) => {
  t.ok(anchorsOf('# A\n## Crash during live calls, and secrets\n## A\n').has('crash-during-live-calls-and-secrets'));
  t.ok(anchorsOf('# A\n## A\n').has('a-1'), 'a repeated heading gets a numbered anchor');
  t.same(checkText(ROOT, 'docs/API.md', '[x](RELIABILITY.md#storage-failures-and-the-cdr-journal) [y](../README.md#operator-cli)'), []);
  t.same(whys(checkText(ROOT, 'docs/API.md', '[x](RELIABILITY.md#storage-failure)')), ['1: docs/RELIABILITY.md has no heading with anchor #storage-failure']);
  t.end();
});

t.test('the repository: every citation in code, tests and docs resolves, and none points outside it', (t) => {
  const files = checkedFiles(ROOT).filter((f) => !SELF.includes(f));
  t.ok(files.length > 500 && files.includes('docs/API.md') && files.includes('README.md'), `${files.length} files checked`);
  const bad = files.flatMap((f) => checkText(ROOT, f, readFileSync(join(ROOT, f), 'utf8')));
  t.same(bad.map((b) => `${b.file}:${b.line}: ${b.text} (${b.why})`), []);
  t.end();
});
