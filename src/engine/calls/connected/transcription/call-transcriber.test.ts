/** @module Tests of the call transcriber: roles, resampling, hold, call-time offsets, merge order, engine failure; and the recording tap. */
import t from 'tap';
import { join } from 'node:path';
import { systemClock } from '../../../../common/clock.js';
import { silentLogger } from '../../../../common/logger.js';
import { StereoWavRecorder, type AudioFrame } from '../../../media/index.js';
import type { RecognitionRequest, RecognitionStream, RecognizedUtterance, SpeakerRole, SpeechRecognizer } from '../../ports.js';
import { CallAudioTap } from './call-audio-tap.js';
import { CallTranscriber } from './call-transcriber.js';

/** A recording implementation of the SpeechRecognizer port: what each stream was given, and scripted results. */
class ScriptedRecognizer implements SpeechRecognizer {
  readonly name = 'scripted';
  readonly sampleRate: 8000 | 16000;
  readonly streams = new Map<SpeakerRole, ScriptedStream>();
  readonly results: Partial<Record<SpeakerRole, RecognizedUtterance[]>>;
  constructor(sampleRate: 8000 | 16000, results: Partial<Record<SpeakerRole, RecognizedUtterance[]>> = {}) {
    this.sampleRate = sampleRate;
    this.results = results;
  }
  open(request: RecognitionRequest): RecognitionStream {
    const stream = new ScriptedStream(request, this.results[request.role] ?? []);
    this.streams.set(request.role, stream);
    return stream;
  }
}

class ScriptedStream implements RecognitionStream {
  readonly request: RecognitionRequest;
  readonly events: string[] = [];
  samples = 0;
  readonly #results: RecognizedUtterance[];
  constructor(request: RecognitionRequest, results: RecognizedUtterance[]) {
    this.request = request;
    this.#results = results;
  }
  write(pcm: Int16Array): void {
    this.samples += pcm.length;
  }
  pause(): void {
    this.events.push('pause');
  }
  resume(): void {
    this.events.push('resume');
  }
  close(): Promise<RecognizedUtterance[]> {
    this.events.push('close');
    return Promise.resolve(this.#results);
  }
}

const START = 1000;

/** A 20 ms 8 kHz frame that arrived (ended) at `atMs` after the call's start. */
const frame = (atMs: number): AudioFrame => ({ pcm: new Int16Array(160), sampleRate: 8000, timestamp: 0, receivedAt: START + atMs });

async function transcriber(recognizer: SpeechRecognizer, channels: SpeakerRole[] = ['caller', 'agent']): Promise<CallTranscriber> {
  return CallTranscriber.open({ settings: { recognizer, channels }, callId: 'call_1', startedAt: START, log: silentLogger() });
}

t.test('docs/API.md "Calls": one stream per configured party, the remote party as caller, resampled to the engine rate', async (t) => {
  const recognizer = new ScriptedRecognizer(16000);
  const tr = await transcriber(recognizer, ['caller']);
  t.same([...recognizer.streams.keys()], ['caller'], 'only the configured party');
  t.same(recognizer.streams.get('caller')!.request.sampleRate, 16000);
  for (let i = 1; i <= 50; i++) tr.writeFrame('remote', frame(i * 20));
  tr.writeFrame('agent', frame(20));
  const written = recognizer.streams.get('caller')!.samples;
  // One second at 8 kHz becomes about a second at 16 kHz (less the filter's start-up delay).
  t.ok(written > 15_500 && written <= 16_000, `1 s of caller audio reached the engine as ${written} samples at 16 kHz`);
  await tr.close();
});

t.test('docs/API.md "Calls": hold pauses every stream, its audio is not written, and unhold resumes them', async (t) => {
  const recognizer = new ScriptedRecognizer(8000);
  const tr = await transcriber(recognizer);
  tr.writeFrame('remote', frame(20));
  tr.pause();
  tr.pause();
  tr.writeFrame('remote', frame(40));
  tr.writeFrame('agent', frame(40));
  tr.resume();
  tr.writeFrame('remote', frame(60));
  await tr.close();
  t.same(recognizer.streams.get('caller')!.events, ['pause', 'resume', 'close'], 'a second pause changes nothing');
  t.same(recognizer.streams.get('agent')!.events, ['pause', 'resume', 'close']);
  t.equal(recognizer.streams.get('caller')!.samples, 320, 'the held frame was not written');
  t.equal(recognizer.streams.get('agent')!.samples, 0);
});

t.test('docs/API.md "Calls" offset_s: utterances are placed in call time across a hold, turns of both parties ordered by it', async (t) => {
  // Stream time 0-1000 ms was heard at call time 0-1000 ms; stream 1000-2000 ms after a 5 s hold, at 6000-7000 ms.
  const recognizer = new ScriptedRecognizer(8000, {
    caller: [{ text: 'before hold', startMs: 200, endMs: 800 }, { text: 'after hold', startMs: 1200, endMs: 1800 }],
    agent: [{ text: 'welcome back', startMs: 100, endMs: 600 }],
  });
  const tr = await transcriber(recognizer);
  for (let at = 20; at <= 1000; at += 20) tr.writeFrame('remote', frame(at));
  tr.pause();
  tr.resume();
  for (let at = 6020; at <= 7000; at += 20) tr.writeFrame('remote', frame(at));
  // The agent spoke only after the hold.
  for (let at = 6020; at <= 7000; at += 20) tr.writeFrame('agent', frame(at));
  const turns = await tr.close();
  t.same(turns, [
    { role: 'caller', text: 'before hold', offset_s: 0.2 },
    { role: 'agent', text: 'welcome back', offset_s: 6.1 },
    { role: 'caller', text: 'after hold', offset_s: 6.2 },
  ]);
  t.equal(await tr.close(), turns, 'close is idempotent');
});

t.test('an engine that fails stops getting audio; the other party is still transcribed and the call is not disturbed', async (t) => {
  const recognizer = new ScriptedRecognizer(8000, { agent: [{ text: 'hello', startMs: 0, endMs: 300 }] });
  const tr = await transcriber(recognizer);
  tr.writeFrame('remote', frame(20));
  recognizer.streams.get('caller')!.request.handlers?.onError?.('decoder died');
  tr.writeFrame('remote', frame(40));
  tr.writeFrame('agent', frame(40));
  t.equal(recognizer.streams.get('caller')!.samples, 160, 'nothing written after the failure');
  t.same(await tr.close(), [{ role: 'agent', text: 'hello', offset_s: 0.02 }]);
});

t.test('the recording tap: frames, channel sinks, pause and resume reach the recording and the transcriber alike', async (t) => {
  const recognizer = new ScriptedRecognizer(8000);
  const tr = await transcriber(recognizer);
  const recorder = await StereoWavRecorder.open({ path: join(t.testdir({}), 'call.wav'), clock: systemClock });
  const tap = new CallAudioTap(recorder, tr);
  const now = systemClock.monotonic();
  const live = (): AudioFrame => ({ pcm: new Int16Array(160).fill(1000), sampleRate: 8000, timestamp: 0, receivedAt: now });
  tap.writeFrame('remote', live());
  tap.channelSink('agent').writeFrame(live());
  tap.pause();
  t.ok(recorder.isPaused && tr.isPaused, 'hold pauses both');
  tap.resume();
  t.ok(!recorder.isPaused && !tr.isPaused, 'unhold resumes both');
  t.equal(recognizer.streams.get('caller')!.samples, 160, 'the caller frame reached the transcriber');
  t.equal(recognizer.streams.get('agent')!.samples, 160, "the agent sink's frame too");
  const meta = await recorder.close();
  t.equal(meta.pauses.length, 1, 'and the recording kept its pause');
  await tr.close();
  // A call without a recording: the tap feeds the transcriber alone.
  const alone = new CallAudioTap(null, await transcriber(new ScriptedRecognizer(8000)));
  alone.writeFrame('remote', live());
  alone.pause();
  alone.resume();
  t.pass('no recorder is needed');
});
