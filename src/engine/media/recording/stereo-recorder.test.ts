/** @module Tests of stereo recording: channel layout, time alignment, gaps, hold, headers, crash repair. */
import { execFileSync } from 'node:child_process';
import { appendFileSync, copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { FakeClock } from '../../../common/clock.js';
import { needPeer, tempWorkdir } from '../../../../test/support/peers.js';
import { repairRecording, repairRecordings } from './repair.js';
import { StereoWavRecorder, type RecordingChannel, type RecordingMetadata } from './stereo-recorder.js';
import { parseWavHeader, WAV_HEADER_BYTES } from './wav-header.js';

const REMOTE_TS = 1000;
const AGENT_TS = 3_000_000_000;

/** A 20 ms frame whose every sample carries its tick number: remote positive, agent negative. */
function frameFor(channel: RecordingChannel, tick: number, receivedAt: number, tsBase?: number): Parameters<StereoWavRecorder['writeFrame']>[1] {
  const value = channel === 'remote' ? 1000 + tick : -(1000 + tick);
  const base = tsBase ?? (channel === 'remote' ? REMOTE_TS : AGENT_TS);
  return { pcm: new Int16Array(160).fill(value), sampleRate: 8000, timestamp: (base + tick * 160) >>> 0, receivedAt };
}

function readStereo(path: string): { left: Int16Array; right: Int16Array; header: ReturnType<typeof parseWavHeader>; size: number } {
  const file = readFileSync(path);
  const samples = new Int16Array(file.buffer.slice(file.byteOffset + WAV_HEADER_BYTES, file.byteOffset + file.length));
  const frames = samples.length / 2;
  const left = new Int16Array(frames);
  const right = new Int16Array(frames);
  for (let i = 0; i < frames; i++) {
    left[i] = samples[2 * i] ?? 0;
    right[i] = samples[2 * i + 1] ?? 0;
  }
  return { left, right, header: parseWavHeader(file), size: file.length };
}

interface Scenario {
  ticks: number;
  skipRemote?: (tick: number) => boolean;
  agentDelayMs?: (tick: number) => number;
  /** Runs after the tick's frames, as signalling falls between packets. */
  onTick?: (tick: number, rec: StereoWavRecorder) => void;
  agentTsBase?: (tick: number) => number;
}

/** Drives a recorder with a FakeClock: one remote and one agent frame per 20 ms tick. */
async function record(dir: string, name: string, s: Scenario): Promise<{ meta: RecordingMetadata; path: string }> {
  const clock = new FakeClock();
  const path = join(dir, name);
  const rec = await StereoWavRecorder.open({ path, clock });
  for (let tick = 0; tick < s.ticks; tick++) {
    clock.advance(20);
    if (!s.skipRemote?.(tick)) rec.writeFrame('remote', frameFor('remote', tick, clock.monotonic()));
    const delay = s.agentDelayMs?.(tick) ?? 0;
    rec.writeFrame('agent', frameFor('agent', tick, clock.monotonic() + delay, s.agentTsBase?.(tick)));
    s.onTick?.(tick, rec);
  }
  return { meta: await rec.close(), path };
}

/** For every file position holding remote tick k, the agent holds tick k too. */
function misaligned(left: Int16Array, right: Int16Array, from: number): number {
  let bad = 0;
  for (let i = from; i < left.length; i++) if (left[i] !== 0 && right[i] !== 0 && left[i] !== -(right[i] ?? 0)) bad++;
  return bad;
}

t.test('docs/ARCHITECTURE.md "Agent media leg": remote party left, agent right, aligned by time despite jitter', async (t) => {
  const dir = tempWorkdir(t, 'vgw-rec-');
  // The agent's first frames arrive late by 30 and 10 ms, later ones on time.
  const { meta, path } = await record(dir, 'a.wav', { ticks: 150, agentDelayMs: (k) => (k === 0 ? 30 : k === 1 ? 10 : 0) });
  const { left, right, header, size } = readStereo(path);
  t.match(header, { channels: 2, sampleRate: 8000, blockAlign: 4, dataBytes: size - 44, riffSize: size - 8 }, 'final header sizes');
  t.equal(left[0], 1000, 'left channel starts with the remote party');
  t.ok(right.some((v) => v === -1010), 'right channel carries the agent');
  t.equal(misaligned(left, right, 160 * 3), 0, 'after the first frames, both channels of every sample are the same tick');
  t.equal(meta.durationMs, 3000);
  t.equal(left.length, 150 * 160);
  t.equal(meta.finalized, true);
});

t.test('docs/ARCHITECTURE.md "Agent media leg": a gap in one channel becomes silence without shifting what follows', async (t) => {
  const dir = tempWorkdir(t, 'vgw-rec-');
  const { path } = await record(dir, 'gap.wav', { ticks: 100, skipRemote: (k) => k >= 40 && k < 50 });
  const { left, right } = readStereo(path);
  t.ok(left.subarray(40 * 160, 50 * 160).every((v) => v === 0), '200 ms of remote silence where packets were lost');
  t.equal(left[50 * 160], 1050, 'remote audio resumes at its own time');
  t.equal(misaligned(left, right, 0), 0);
  t.equal(right[45 * 160], -1045, 'the agent channel is untouched');
});

t.test('docs/ARCHITECTURE.md "Agent media leg": hold pauses the recording and keeps the pause interval', async (t) => {
  const dir = tempWorkdir(t, 'vgw-rec-');
  const { meta, path } = await record(dir, 'hold.wav', {
    ticks: 200,
    onTick: (k, rec) => {
      if (k === 99) rec.pause();
      if (k === 149) rec.resume();
    },
  });
  const { left, right, header, size } = readStereo(path);
  t.equal(meta.durationMs, 3000, '4 s of call, 1 s of it on hold');
  t.equal(header?.dataBytes, size - 44);
  t.equal(meta.pauses.length, 1);
  t.match(meta.pauses[0], { atMs: 2000, durationMs: 1000 });
  t.ok(meta.pauses[0]?.endedAt, 'the pause has an end');
  t.equal(left[100 * 160], 1150, 'audio after hold follows the audio before it');
  t.equal(misaligned(left, right, 0), 0);
  const sidecar = JSON.parse(readFileSync(`${path}.json`, 'utf8')) as RecordingMetadata;
  t.same(sidecar.pauses, meta.pauses, 'the sidecar keeps the pause intervals');
  t.equal(sidecar.finalized, true);
});

t.test('a new timestamp base on one leg (source change) re-anchors instead of inserting silence', async (t) => {
  const dir = tempWorkdir(t, 'vgw-rec-');
  const { meta, path } = await record(dir, 'swap.wav', { ticks: 100, agentTsBase: (k) => (k < 50 ? AGENT_TS : 77_777) });
  const { left, right } = readStereo(path);
  t.equal(meta.durationMs, 2000, 'no time invented for the jump');
  t.equal(misaligned(left, right, 0), 0);
});

t.test('docs/ARCHITECTURE.md "Agent media leg": the header is updated while recording, and a crash is repaired at start-up', async (t) => {
  const dir = tempWorkdir(t, 'vgw-rec-');
  const clock = new FakeClock();
  const path = join(dir, 'live.wav');
  const rec = await StereoWavRecorder.open({ path, clock, writeChunkMs: 500 });
  for (let tick = 0; tick < 150; tick++) {
    clock.advance(20);
    rec.writeFrame('remote', frameFor('remote', tick, clock.monotonic()));
  }
  await rec.flushed();
  const live = readStereo(path);
  t.ok((live.header?.dataBytes ?? 0) >= 2 * 8000 * 4, `header already counts ${live.header?.dataBytes} bytes mid-call`);
  t.equal(live.header?.dataBytes, live.size - 44, 'and agrees with the file length between writes');
  t.throws(() => rec.writeFrame('remote', { pcm: new Int16Array(320), sampleRate: 16000, timestamp: 0, receivedAt: 0 }), RangeError);

  // What a crash leaves: sizes from before the last writes (here zero) and a cut-off frame.
  const crashed = join(dir, 'crashed.wav');
  copyFileSync(path, crashed);
  const bytes = readFileSync(crashed);
  bytes.writeUInt32LE(0, 4);
  bytes.writeUInt32LE(0, 40);
  writeFileSync(crashed, bytes);
  appendFileSync(crashed, Buffer.from([1, 2, 3]));
  writeFileSync(`${crashed}.json`, JSON.stringify({ ...rec.metadata, finalized: false }));
  const outcome = await repairRecording(crashed);
  t.match(outcome, { status: 'repaired', trimmedBytes: 3, dataBytes: live.size - 44 });
  const fixed = readStereo(crashed);
  t.match(fixed.header, { dataBytes: fixed.size - 44, riffSize: fixed.size - 8 });
  t.match(JSON.parse(readFileSync(`${crashed}.json`, 'utf8')), { finalized: true, repaired: true });
  t.match(await repairRecording(crashed), { status: 'ok' }, 'repairing twice changes nothing');

  writeFileSync(join(dir, 'junk.wav'), 'not a wave file at all, just text long enough for a header');
  await rec.close();
  const all = await repairRecordings(dir);
  t.same(all.map((o) => [o.path.slice(dir.length + 1), o.status]), [['crashed.wav', 'ok'], ['junk.wav', 'not-wav'], ['live.wav', 'ok']]);
  await t.rejects(StereoWavRecorder.open({ path, clock }), { code: 'EEXIST' }, 'an existing recording is never overwritten');
});

t.test('sox reads the recording as 8 kHz 16-bit stereo of the right length', async (t) => {
  if (!needPeer(t, 'sox')) return;
  const dir = tempWorkdir(t, 'vgw-rec-');
  const { path } = await record(dir, 'soxi.wav', { ticks: 50 });
  const info = (flag: string): string => execFileSync('soxi', [flag, path], { encoding: 'utf8' }).trim();
  t.same([info('-c'), info('-r'), info('-b'), info('-s')], ['2', '8000', '16', '8000']);
});
