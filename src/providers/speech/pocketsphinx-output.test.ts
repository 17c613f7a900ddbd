import t from 'tap';
import { MAX_LINE_CHARS, PocketsphinxOutputParser } from './pocketsphinx-output.js';

// Captured from Debian 12 pocketsphinx_continuous -time yes (two utterances, the first noise only).
const CAPTURED = [
  '',
  '<s> 0.000 0.400 1.000100',
  '</s> 0.410 0.900 1.000000',
  'hello world',
  '<s> 6.140 6.280 1.000100',
  'hello 6.290 6.640 0.883544',
  'world(2) 6.650 7.180 1.000000',
  '[SPEECH] 7.190 7.200 0.720336',
  '</s> 7.190 7.420 1.000000',
  '',
].join('\n');

t.test('pocketsphinx -time yes: the hypothesis is the text, the first and last words time it, fillers and empty utterances are dropped', (t) => {
  const parser = new PocketsphinxOutputParser();
  t.same([...parser.push(CAPTURED), ...parser.end()], [{ text: 'hello world', startMs: 6290, endMs: 7180 }]);
  t.end();
});

t.test('pocketsphinx output: an utterance completes at its </s> even when split across chunks', (t) => {
  const parser = new PocketsphinxOutputParser();
  const cut = CAPTURED.indexOf('world(2)') + 3;
  t.same(parser.push(CAPTURED.slice(0, cut)), [], 'nothing before the end of the utterance');
  t.same(parser.push(CAPTURED.slice(cut)), [{ text: 'hello world', startMs: 6290, endMs: 7180 }]);
  t.same(parser.end(), []);
  t.end();
});

t.test('pocketsphinx output: without -time segments, each hypothesis line is an utterance at 0 (a configured option may drop them)', (t) => {
  const parser = new PocketsphinxOutputParser();
  t.same([...parser.push('hello world\ngoodbye moon\n'), ...parser.end()], [
    { text: 'hello world', startMs: 0, endMs: 0 },
    { text: 'goodbye moon', startMs: 0, endMs: 0 },
  ]);
  t.end();
});

t.test('pocketsphinx output: an over-long line is dropped, the words after it still make the text', (t) => {
  const parser = new PocketsphinxOutputParser();
  const out = [
    ...parser.push('x'.repeat(MAX_LINE_CHARS + 10)),
    ...parser.push('y'.repeat(10) + '\n<s> 1.000 1.100 1.0\nhello 1.110 1.500 0.9\n'),
    ...parser.push('</s> 1.600 1.700 1.0\n'),
  ];
  t.same(out, [{ text: 'hello', startMs: 1110, endMs: 1500 }]);
  t.end();
});
