/** @module Tests of the local recognizer with real pocketsphinx processes on flite speech, and its failure paths. */
import t, { type Test } from 'tap';
import { execFileSync } from 'node:child_process';
import { chmodSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import wavefile from 'wavefile';
import { systemClock } from '../../common/clock.js';
import { createLogger, type Logger } from '../../common/logger.js';
import type { RecognizedUtterance } from '../../engine/calls/ports.js';
import { createResampler } from '../../engine/media/index.js';
import { needPeer, tempWorkdir } from '../../../test/support/peers.js';
import { DEFAULT_POCKETSPHINX_ARGS, PocketsphinxRecognizer, POCKETSPHINX_RATE } from './pocketsphinx-recognizer.js';
import { withDeadline } from '../../../test/support/deadline.js';

/** A logger whose lines the test reads. */
function capturingLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return { lines, logger: createLogger({ level: 'debug', destination: { write: (line: string) => { lines.push(JSON.parse(line) as Record<string, unknown>); } } }) };
}

/**
 * The phrases the decoder may hear: competing words, so "hello world" is an outcome the audio has
 * to earn, while the test does not hang on the open-vocabulary model's mood (measured: with the
 * speex resampler at quality 5 it hears flite's "hello world" at the start of a stream as "what").
 */
function grammar(t: Test): string {
  const file = join(tempWorkdir(t, 'vgw-asr-test-'), 'phrases.gram');
  writeFileSync(file, '#JSGF V1.0;\ngrammar phrases;\npublic <phrase> = (hello | goodbye | yes | no | thank you) (world | moon | there | please);\n');
  return file;
}

/** flite's "hello world" at 16 kHz, through the media engine's resampler (as the call layer feeds it). */
async function fliteSpeech16k(t: Test, text: string): Promise<Int16Array> {
  const file = join(tempWorkdir(t, 'vgw-asr-test-'), 'speech.wav');
  execFileSync('flite', ['-t', text, '-o', file]);
  const wav = new wavefile.WaveFile(readFileSync(file));
  const samples = wav.getSamples(false, Int16Array) as unknown as Int16Array;
  const resampler = await createResampler(8000, POCKETSPHINX_RATE);
  const out = Int16Array.from(resampler.process(samples));
  resampler.close();
  return out;
}

const silence = (ms: number): Int16Array => new Int16Array((POCKETSPHINX_RATE * ms) / 1000);

/** Writes in 20 ms blocks, as a call does. */
function writeBlocks(write: (pcm: Int16Array) => void, pcm: Int16Array): void {
  for (let i = 0; i < pcm.length; i += 320) write(pcm.subarray(i, i + 320));
}

t.test('pocketsphinx -time: a real decoder (JSGF phrases) hears flite "hello world" written in 20 ms blocks, timed in the audio written (pause silence excluded)', async (t) => {
  if (!needPeer(t, 'pocketsphinx_continuous', 'flite')) return;
  const speech = await fliteSpeech16k(t, 'hello world');
  const { logger } = capturingLogger();
  const args = [...DEFAULT_POCKETSPHINX_ARGS, '-jsgf', grammar(t)];
  const recognizer = new PocketsphinxRecognizer({ command: 'pocketsphinx_continuous', args, clock: systemClock, logger });
  const finals: RecognizedUtterance[] = [];
  const errors: string[] = [];
  const stream = recognizer.open({ callId: 'call_1', role: 'caller', sampleRate: POCKETSPHINX_RATE, handlers: { onFinal: (u) => finals.push(u), onError: (e) => errors.push(e) } });
  const write = (pcm: Int16Array): void => stream.write(pcm);
  writeBlocks(write, silence(500));
  writeBlocks(write, speech);
  writeBlocks(write, silence(500));
  // Hold: the stream adds its own silence to end the utterance; that silence is not in our time.
  stream.pause();
  writeBlocks(write, speech); // dropped while paused
  stream.resume();
  const secondAt = 1000 + (speech.length * 1000) / POCKETSPHINX_RATE;
  writeBlocks(write, speech);
  writeBlocks(write, silence(800));
  const utterances = await stream.close();
  t.same(errors, []);
  t.equal(utterances.length, 2, `two utterances: ${JSON.stringify(utterances)}`);
  for (const u of utterances) t.match(u.text, /hello world/i);
  t.ok(utterances[0]!.startMs >= 400 && utterances[0]!.startMs <= 800, `the first starts after the 500 ms of silence (${utterances[0]!.startMs} ms)`);
  // Both start the same way (flite's lead-in), so their distance is the distance at which they were written.
  const apart = utterances[1]!.startMs - utterances[0]!.startMs;
  t.ok(Math.abs(apart - (secondAt - 500)) <= 100, `they are ${apart} ms apart, as written (${secondAt - 500} ms): the pause silence is not counted`);
  t.same(finals, utterances, 'each was also reported as final while the stream ran');
});

t.test('a missing command is found on the first stream, reported once, and later streams do not try again', async (t) => {
  const { logger, lines } = capturingLogger();
  const recognizer = new PocketsphinxRecognizer({ command: join(tempWorkdir(t), 'no-such-decoder'), args: [], clock: systemClock, logger });
  const errors: string[] = [];
  const first = recognizer.open({ callId: 'c1', role: 'caller', sampleRate: POCKETSPHINX_RATE, handlers: { onError: (e) => errors.push(e) } });
  first.write(silence(20));
  t.same(await first.close(), []);
  t.match(errors, [/command not found/], JSON.stringify(errors));
  t.match(recognizer.unavailable, /command not found/);
  const second = recognizer.open({ callId: 'c2', role: 'agent', sampleRate: POCKETSPHINX_RATE, handlers: { onError: (e) => errors.push(e) } });
  second.write(silence(20));
  t.same(await second.close(), []);
  t.equal(errors.length, 2, 'the second stream reports it too');
  t.equal(lines.filter((l) => /speech recognition is off/.test(String(l.msg))).length, 1, 'logged once');
});

t.test('a decoder that dies mid-call is reported; writes after it are ignored and close still resolves', async (t) => {
  const dir = tempWorkdir(t);
  const script = join(dir, 'dies.sh');
  writeFileSync(script, '#!/bin/sh\necho "FATAL: model missing" >&2\nexit 3\n');
  chmodSync(script, 0o755);
  const { logger } = capturingLogger();
  const recognizer = new PocketsphinxRecognizer({ command: script, args: [], clock: systemClock, logger, tmpDir: dir });
  const errors: string[] = [];
  const stream = recognizer.open({ callId: 'c1', role: 'caller', sampleRate: POCKETSPHINX_RATE, handlers: { onError: (e) => errors.push(e) } });
  let poll: NodeJS.Timeout | undefined;
  await withDeadline('the dying decoder\'s error', new Promise<void>((resolve) => {
    poll = setInterval(() => {
      stream.write(silence(20));
      if (errors.length > 0) resolve();
    }, 20);
  }), 10_000).finally(() => clearInterval(poll));
  t.match(errors[0], /exited \(3\).*FATAL: model missing/);
  stream.write(silence(20));
  t.same(await stream.close(), []);
  t.equal(recognizer.unavailable, null, 'a dying decoder is not a missing one');
});

t.test('bounded work: a decoder that reads nothing gets at most the backlog, and close stops it after its time-out', async (t) => {
  const dir = tempWorkdir(t);
  const script = join(dir, 'stuck.sh');
  // Never opens its input: everything we write waits.
  writeFileSync(script, '#!/bin/sh\nexec sleep 30\n');
  chmodSync(script, 0o755);
  const { logger, lines } = capturingLogger();
  const recognizer = new PocketsphinxRecognizer({ command: script, args: [], clock: systemClock, logger, tmpDir: dir, maxBacklogMs: 500, closeTimeoutMs: 300 });
  const stream = recognizer.open({ callId: 'c1', role: 'caller', sampleRate: POCKETSPHINX_RATE });
  writeBlocks((pcm) => stream.write(pcm), silence(5000));
  t.same(await stream.close(), [], 'close resolves although the decoder never finished');
  t.ok(lines.some((l) => /behind/.test(String(l.msg))), 'dropping audio was logged');
  const dropped = lines.find((l) => l.dropped_ms !== undefined)?.dropped_ms as number;
  t.ok(dropped >= 4000, `at least 4.5 s of the 5 s were dropped, not buffered (${dropped} ms)`);
  t.ok(lines.some((l) => /did not finish in time/.test(String(l.msg))), 'the stuck decoder was stopped');
  // Unsent audio must not pin the pipe: a pending write would hold the fd and keep the process alive.
  const pipeFds = (): string[] => readdirSync('/proc/self/fd').flatMap((fd) => {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      return target.startsWith(dir) ? [target] : [];
    } catch {
      return []; // closed while listing
    }
  });
  for (let i = 0; i < 100 && pipeFds().length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  t.same(pipeFds(), [], 'the audio pipe is released once the stopped decoder is gone');
});
