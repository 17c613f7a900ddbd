/**
 * @module The sandbox far end's announcement: text spoken by flite as 8 kHz PCM, or a short tone
 * sequence when flite is not installed or fails.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { wavToPcm8k } from '../connected/audio-files.js';

const execFileAsync = promisify(execFile);

const RATE = 8000;
/** Announcements are kept short: the echo is what a tenant wants to hear. */
const MAX_MS = 3000;
/** flite synthesises a sentence in well under a second; this only guards against a hung child. */
const FLITE_TIMEOUT_MS = 10_000;
/** A 10 ms fade, so a cut at the limit does not click. */
const FADE_SAMPLES = 80;

/** Options of {@link loadAnnouncement}. */
export interface AnnouncementOptions {
  /** The flite command (a name on PATH or an absolute path); default `flite`. */
  flite?: string;
  /** Longest announcement kept, in milliseconds (default and upper bound 3000). */
  maxMs?: number;
}

/**
 * Speaks `text` with flite into a temporary WAV and returns it as 8 kHz mono PCM, at most 3 s
 * (cut with a short fade). Falls back to {@link toneAnnouncement} when flite is missing, fails,
 * or the text is empty, so the sandbox always has something to play.
 */
export async function loadAnnouncement(text: string, options: AnnouncementOptions = {}): Promise<Int16Array> {
  const maxSamples = Math.round((Math.min(options.maxMs ?? MAX_MS, MAX_MS) * RATE) / 1000);
  const spoken = text.trim() === '' ? null : await synthesize(text, options.flite ?? 'flite');
  const pcm = spoken && spoken.length > 0 ? spoken : toneAnnouncement();
  return limit(pcm, maxSamples);
}

/**
 * Three rising beeps (440, 660, 880 Hz, 150 ms each, 100 ms apart) at about -12 dBFS: what the
 * sandbox plays when no speech synthesiser is available. 8 kHz, 650 ms.
 */
export function toneAnnouncement(): Int16Array {
  const beepSamples = 0.15 * RATE;
  const gapSamples = 0.1 * RATE;
  const frequencies = [440, 660, 880];
  const out = new Int16Array(frequencies.length * beepSamples + (frequencies.length - 1) * gapSamples);
  frequencies.forEach((hz, i) => {
    const start = i * (beepSamples + gapSamples);
    for (let n = 0; n < beepSamples; n++) {
      // A raised-cosine envelope over the first and last 10 ms keeps each beep from clicking.
      const edge = Math.min(n, beepSamples - 1 - n);
      const envelope = edge < FADE_SAMPLES ? 0.5 - 0.5 * Math.cos((Math.PI * edge) / FADE_SAMPLES) : 1;
      out[start + n] = Math.round(8000 * envelope * Math.sin((2 * Math.PI * hz * n) / RATE));
    }
  });
  return out;
}

/** flite's output as 8 kHz mono PCM, or null when it cannot be had. */
async function synthesize(text: string, flite: string): Promise<Int16Array | null> {
  let dir: string | null = null;
  try {
    dir = await mkdtemp(join(tmpdir(), 'vgw-announcement-'));
    const wav = join(dir, 'announcement.wav');
    // execFile, not a shell: the text is an argument and never interpreted.
    await execFileAsync(flite, ['-t', text, '-o', wav], { timeout: FLITE_TIMEOUT_MS });
    return wavToPcm8k(await readFile(wav));
  } catch {
    return null;
  } finally {
    if (dir) await rm(dir, { recursive: true, force: true });
  }
}

/** Cuts `pcm` to `maxSamples` with a short linear fade-out at the cut. */
function limit(pcm: Int16Array, maxSamples: number): Int16Array {
  if (pcm.length <= maxSamples) return pcm;
  const out = pcm.slice(0, maxSamples);
  const fade = Math.min(FADE_SAMPLES, out.length);
  for (let i = 0; i < fade; i++) {
    const at = out.length - fade + i;
    out[at] = Math.round(out[at]! * (1 - (i + 1) / fade));
  }
  return out;
}
