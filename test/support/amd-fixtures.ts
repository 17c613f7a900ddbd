/**
 * @module The labelled answering-machine-detection set (scripts/make-amd-fixtures.sh) and the
 * detector run over it, shared by the accuracy test and `npm run bench:amd` (docs/PERFORMANCE.md
 * "Answering-machine detection").
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { wavToPcm8k } from '../../src/engine/calls/connected/audio-files.js';
import { AmdDetector, type AmdDecision, type AmdResult, type AmdThresholds } from '../../src/engine/media/amd/amd-detector.js';
import { WebRtcVad } from '../../src/engine/media/vad/webrtc-vad.js';

export const AMD_SCRIPT = join(import.meta.dirname, '../../scripts/make-amd-fixtures.sh');
export const AMD_RESULTS: readonly AmdResult[] = ['human', 'machine', 'fax', 'unknown'];

/** Builds the set into `dir`; resolves with the labelled files. */
export async function makeAmdFixtures(dir: string): Promise<{ file: string; label: AmdResult }[]> {
  await promisify(execFile)('sh', [AMD_SCRIPT, dir], { timeout: 600_000 });
  return readFileSync(join(dir, 'labels.tsv'), 'utf8').trim().split('\n').map((line) => {
    const [file, label] = line.split('\t') as [string, AmdResult];
    return { file: join(dir, file), label };
  });
}

export interface AmdOutcome {
  file: string;
  label: AmdResult;
  decision: AmdDecision;
}

/** Runs a fresh detector (VAD mode 3, 20 ms frames, as on a call) over each clip from its start. */
export async function runAmd(clips: readonly { file: string; label: AmdResult }[], thresholds: Partial<AmdThresholds> = {}): Promise<AmdOutcome[]> {
  const outcomes: AmdOutcome[] = [];
  for (const clip of clips) {
    const pcm = wavToPcm8k(readFileSync(clip.file));
    const vad = await WebRtcVad.create({ sampleRate: 8000, frameMs: 20, mode: 3 });
    let decision: AmdDecision | null = null;
    const detector = new AmdDetector({ isSpeech: (f) => vad.isSpeech(f), thresholds, onDecision: (d) => { decision = d; } });
    for (let i = 0; i + 160 <= pcm.length && decision === null; i += 160) detector.write(pcm.subarray(i, i + 160));
    vad.close();
    // A clip that ends undecided is what the call's time-out would give: unknown, at its end.
    outcomes.push({ ...clip, decision: decision ?? { result: 'unknown', decidedAfterMs: Math.floor(pcm.length / 160) * 20, beepAtMs: null } });
  }
  return outcomes;
}

/** Nearest-rank percentile of `values`. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Counts per (label, result). */
export function confusion(outcomes: readonly AmdOutcome[]): Record<AmdResult, Record<AmdResult, number>> {
  const m = Object.fromEntries(AMD_RESULTS.map((l) => [l, Object.fromEntries(AMD_RESULTS.map((r) => [r, 0]))])) as Record<AmdResult, Record<AmdResult, number>>;
  for (const o of outcomes) m[o.label][o.decision.result]++;
  return m;
}
