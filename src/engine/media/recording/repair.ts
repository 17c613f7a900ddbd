/** @module Start-up repair of recordings left unfinished by a crash: header sizes from the file length. */
import { open, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DATA_SIZE_OFFSET, parseWavHeader, RIFF_SIZE_OFFSET, sizeFields, WAV_HEADER_BYTES } from './wav-header.js';

/** What {@link repairRecording} found: a protocol-style outcome, not an exception. */
export type RepairOutcome =
  | { status: 'ok'; path: string; durationMs: number }
  | { status: 'repaired'; path: string; durationMs: number; dataBytes: number; trimmedBytes: number }
  | { status: 'not-wav'; path: string };

/**
 * Makes a WAV file's RIFF and data sizes match what is on disk. A recorder that died between
 * chunk writes leaves sizes that lag the data (or are zero); a write cut short can leave a
 * partial sample frame at the end, which is cut off. The sidecar `<path>.json`, when present and
 * not finalized, is marked finalized with `repaired: true`.
 */
export async function repairRecording(path: string): Promise<RepairOutcome> {
  const fh = await open(path, 'r+');
  let outcome: RepairOutcome;
  try {
    const head = Buffer.alloc(WAV_HEADER_BYTES);
    const { bytesRead } = await fh.read(head, 0, WAV_HEADER_BYTES, 0);
    const header = bytesRead === WAV_HEADER_BYTES ? parseWavHeader(head) : null;
    if (!header || header.blockAlign < 1) return { status: 'not-wav', path };
    const { size } = await fh.stat();
    const onDisk = size - WAV_HEADER_BYTES;
    const dataBytes = onDisk - (onDisk % header.blockAlign);
    const durationMs = Math.round((dataBytes / header.blockAlign / header.sampleRate) * 1000);
    if (dataBytes === header.dataBytes && header.riffSize === 36 + dataBytes && dataBytes === onDisk) {
      outcome = { status: 'ok', path, durationMs };
    } else {
      if (dataBytes !== onDisk) await fh.truncate(WAV_HEADER_BYTES + dataBytes);
      const { riff, data } = sizeFields(dataBytes);
      await fh.write(riff, 0, 4, RIFF_SIZE_OFFSET);
      await fh.write(data, 0, 4, DATA_SIZE_OFFSET);
      await fh.sync(); // once per repaired file, at start-up: cheap, and the point of repairing
      outcome = { status: 'repaired', path, durationMs, dataBytes, trimmedBytes: onDisk - dataBytes };
    }
  } finally {
    await fh.close();
  }
  await markSidecar(path, outcome.durationMs);
  return outcome;
}

async function markSidecar(path: string, durationMs: number): Promise<void> {
  let meta: Record<string, unknown>;
  try {
    meta = JSON.parse(await readFile(`${path}.json`, 'utf8')) as Record<string, unknown>;
  } catch {
    return; // no sidecar, or one cut short by the crash: the WAV alone is still usable
  }
  if (meta.finalized === true) return;
  await writeFile(`${path}.json`, JSON.stringify({ ...meta, durationMs, finalized: true, repaired: true }, null, 2));
}

/** Repairs every `.wav` in `dir` whose header disagrees with its length (for start-up). */
export async function repairRecordings(dir: string): Promise<RepairOutcome[]> {
  const names = (await readdir(dir)).filter((n) => n.endsWith('.wav')).sort();
  const outcomes: RepairOutcome[] = [];
  for (const name of names) outcomes.push(await repairRecording(join(dir, name)));
  return outcomes;
}
