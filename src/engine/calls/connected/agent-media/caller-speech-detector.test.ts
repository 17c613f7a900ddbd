/** @module Tests of the caller speech detector: VAD events, the echo guard's rule, pause and resume. */
import t from 'tap';
import { CallerSpeechDetector, type CallerSpeechEvent, type CallerSpeechOptions } from './caller-speech-detector.js';

const FRAME = 160;

/**
 * A crude voiced sound at 8 kHz: harmonics of a gliding pitch, two of them stressed like formants.
 * `at` is the absolute sample index, so consecutive frames join without a click.
 */
function vowel(at: number, n: number, pitch: number, amp: number, formants: readonly number[]): Int16Array {
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) {
    const k = at + i;
    const f0 = pitch * (1 + 0.4 * Math.sin(k / 4000));
    let s = 0;
    for (let h = 1; h <= 20; h++) s += Math.sin((2 * Math.PI * f0 * h * k) / 8000) * (formants.includes(h) ? 1 : 0.25 / h);
    out[i] = Math.round(s * amp);
  }
  return out;
}

const agentVoice = (frame: number): Int16Array => vowel(frame * FRAME, FRAME, 150, 3000, [4, 9]);
const callerVoice = (frame: number): Int16Array => vowel(frame * FRAME, FRAME, 110, 3000, [3, 7]);
const silence = (): Int16Array => new Int16Array(FRAME);

/** Sample-wise sum, clipped to 16 bits; `gain` scales `b` (the echo path's loss). */
function mix(a: Int16Array, b: Int16Array, gain = 1): Int16Array {
  return a.map((x, i) => Math.max(-32768, Math.min(32767, x + Math.round(b[i]! * gain))));
}

const MINUS_10_DB = 10 ** (-10 / 20);
const ECHO_DELAY_FRAMES = 5;

interface Scene {
  /** Frames the agent plays, [from, to). */
  agent?: [number, number];
  /** Frames the caller speaks, [from, to). */
  caller?: [number, number];
  frames: number;
}

/**
 * Plays a scene frame by frame: the agent's playout, the line returning it at -10 dB after
 * 100 ms, and the caller's own voice on top. Returns the events with the frame they came in.
 */
async function run(scene: Scene, options: CallerSpeechOptions = {}): Promise<{ events: string[]; detector: CallerSpeechDetector }> {
  const events: string[] = [];
  let frame = 0;
  const detector = await CallerSpeechDetector.create(options, (e: CallerSpeechEvent) => events.push(`${e}@${frame}`));
  const within = (range: [number, number] | undefined, f: number): boolean => range !== undefined && f >= range[0] && f < range[1];
  for (; frame < scene.frames; frame++) {
    detector.notePlayout(within(scene.agent, frame) ? agentVoice(frame) : silence());
    const echoed = frame - ECHO_DELAY_FRAMES;
    let heard = within(scene.agent, echoed) ? mix(silence(), agentVoice(echoed), MINUS_10_DB) : silence();
    if (within(scene.caller, frame)) heard = mix(heard, callerVoice(frame));
    detector.writeCaller(heard, frame * 20);
  }
  return { events, detector };
}

const frameOf = (event: string | undefined): number => Number(event?.split('@')[1] ?? NaN);

t.test('caller VAD: a voiced utterance after silence gives one start after the onset and one stop after the hangover', async (t) => {
  const { events, detector } = await run({ caller: [20, 70], frames: 120 });
  t.teardown(() => detector.close());
  t.equal(events.length, 2, events.join(' '));
  t.ok(events[0]?.startsWith('start@') && frameOf(events[0]) >= 22 && frameOf(events[0]) <= 25, `start 60-100 ms in (${events[0]})`);
  t.ok(events[1]?.startsWith('stop@') && frameOf(events[1]) >= 89, `stop at least 400 ms after the end (${events[1]})`);
  t.same(detector.stats, { speechStarts: 1, speechStops: 1, echoFrames: 0 });
  t.equal(detector.isSpeaking, false);
});

t.test('echo guard (Geigel rule, 6 dB): the agent\'s voice returned at -10 dB after 100 ms starts no speech', async (t) => {
  const { events, detector } = await run({ agent: [10, 110], frames: 150 });
  t.teardown(() => detector.close());
  t.same(events, [], 'no start, no stop');
  t.ok(detector.stats.echoFrames >= 95, `echo frames muted for the VAD (${detector.stats.echoFrames})`);
});

t.test('echo guard: the same echo is speech to the bare VAD (the guard, not the signal, keeps it out)', async (t) => {
  const { events, detector } = await run({ agent: [10, 110], frames: 150 }, { echoReturnLossDb: Infinity });
  t.teardown(() => detector.close());
  t.equal(events[0]?.split('@')[0], 'start', events.join(' '));
});

t.test('echo guard: the caller talking over the agent\'s echo, as loud as the agent, is speech', async (t) => {
  const { events, detector } = await run({ agent: [10, 110], caller: [60, 90], frames: 150 });
  t.teardown(() => detector.close());
  t.equal(events[0]?.split('@')[0], 'start', events.join(' '));
  t.ok(frameOf(events[0]) >= 62 && frameOf(events[0]) <= 65, `within 100 ms of the caller starting (${events[0]})`);
  t.equal(events.length, 2, 'one start and one stop');
});

t.test('echo guard: an echo louder than the assumed loss allows is not explained by it', async (t) => {
  // With an assumed 12 dB loss, a -10 dB echo is too loud to be echo: the guard lets it through.
  const { events, detector } = await run({ agent: [10, 110], frames: 150 }, { echoReturnLossDb: 12 });
  t.teardown(() => detector.close());
  t.equal(events[0]?.split('@')[0], 'start');
});

t.test('hold: pause ends the caller\'s speech and ignores audio; resume starts afresh with a warm-up', async (t) => {
  const events: string[] = [];
  const detector = await CallerSpeechDetector.create({}, (e) => events.push(e));
  t.teardown(() => detector.close());
  for (let f = 0; f < 40; f++) detector.writeCaller(f < 15 ? silence() : callerVoice(f), f * 20);
  t.same(events, ['start']);
  detector.pause();
  detector.pause();
  t.same(events, ['start', 'stop'], 'speech ends with the hold');
  t.equal(detector.isSpeaking, false);
  for (let f = 40; f < 80; f++) detector.writeCaller(callerVoice(f), f * 20);
  t.same(events, ['start', 'stop'], 'nothing while paused');
  detector.resume();
  for (let f = 80; f < 88; f++) detector.writeCaller(callerVoice(f), f * 20);
  t.same(events, ['start', 'stop'], 'the first 160 ms after resume are warm-up');
  for (let f = 88; f < 100; f++) detector.writeCaller(callerVoice(f), f * 20);
  t.same(events, ['start', 'stop', 'start'], 'then the caller is heard again');
  t.same(detector.stats, { speechStarts: 2, speechStops: 1, echoFrames: 0 });
});

t.test('caller VAD: packets of any length are cut into 20 ms frames', async (t) => {
  const events: string[] = [];
  const detector = await CallerSpeechDetector.create({}, (e) => events.push(e));
  t.teardown(() => detector.close());
  const speech = vowel(0, 8000, 110, 3000, [3, 7]);
  for (let at = 0; at < speech.length; at += 240) detector.writeCaller(speech.subarray(at, at + 240), at / 8);
  t.same(events, ['start'], '30 ms packets');
});
