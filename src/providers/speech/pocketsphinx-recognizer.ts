/**
 * @module The local speech recognizer: one Debian `pocketsphinx_continuous` process per stream,
 * fed raw 16 kHz PCM through a named pipe, its text output parsed into utterances.
 */
import { spawn } from 'node:child_process';
import type { Clock } from '../../common/clock.js';
import type { Logger } from '../../common/logger.js';
import type { RecognitionRequest, RecognitionStream, RecognizedUtterance, SpeechRecognizer } from '../../engine/calls/ports.js';
import { PocketsphinxStream } from './pocketsphinx-stream.js';

/** Options of {@link PocketsphinxRecognizer}. */
export interface PocketsphinxOptions {
  /** The executable: `pocketsphinx_continuous` from Debian's pocketsphinx package. */
  command: string;
  /** An acoustic model folder (`-hmm`); the package's en-us model when absent. */
  model?: string;
  /** Further decoder arguments (a `-jsgf` grammar, `-kws` keywords, `-vad_threshold`). */
  args: readonly string[];
  clock: Clock;
  logger: Logger;
  /** Where the per-stream named pipes are made; the system temporary folder when absent. */
  tmpDir?: string;
  /** Audio waiting for the decoder beyond which new audio is dropped. Default 10 s. */
  maxBacklogMs?: number;
  /** How long close() waits for the decoder to finish before stopping it. Default 15 s. */
  closeTimeoutMs?: number;
}

/** The decoder's model rate: 16 kHz. Measured: `-samprate 8000` fails with the en-us model (its feat.params set upperf 6800). */
export const POCKETSPHINX_RATE = 16000;
/** Noise threshold of the decoder's VAD: the default 2.0 took line noise and G.711 silence for speech and misheard the words after it. */
export const DEFAULT_POCKETSPHINX_ARGS: readonly string[] = ['-vad_threshold', '3.0'];

/**
 * Runs pocketsphinx per stream. A missing command is found on the first stream (spawn reports
 * ENOENT), logged once, and later streams fail at once without trying again.
 */
export class PocketsphinxRecognizer implements SpeechRecognizer {
  readonly name = 'pocketsphinx';
  readonly sampleRate = POCKETSPHINX_RATE;
  readonly #options: PocketsphinxOptions;
  #missing: string | null = null;

  constructor(options: PocketsphinxOptions) {
    this.#options = options;
  }

  /** Why the engine cannot run (its command is missing), once a stream has found out; else null. */
  get unavailable(): string | null {
    return this.#missing;
  }

  open(request: RecognitionRequest): RecognitionStream {
    const log = this.#options.logger.child({ call_id: request.callId, role: request.role, engine: this.name });
    if (request.sampleRate !== POCKETSPHINX_RATE) throw new RangeError(`pocketsphinx takes ${POCKETSPHINX_RATE} Hz, not ${request.sampleRate}`);
    if (this.#missing !== null) return failedStream(this.#missing, request);
    const o = this.#options;
    const args = [...(o.model ? ['-hmm', o.model] : []), '-time', 'yes', ...o.args];
    return new PocketsphinxStream({
      spawn: (infile) => spawn(o.command, ['-infile', infile, ...args], { stdio: ['ignore', 'pipe', 'pipe'] }),
      clock: o.clock, log, tmpDir: o.tmpDir, handlers: request.handlers ?? {},
      maxBacklogBytes: Math.round(((o.maxBacklogMs ?? 10_000) * POCKETSPHINX_RATE * 2) / 1000),
      closeTimeoutMs: o.closeTimeoutMs ?? 15_000,
      onMissing: (message) => {
        if (this.#missing !== null) return;
        this.#missing = message;
        o.logger.error({ command: o.command }, `speech recognition is off: ${message} (apt-get install pocketsphinx pocketsphinx-en-us)`);
      },
    });
  }
}

/** A stream whose engine is known to be missing: reports it and hears nothing. */
function failedStream(message: string, request: RecognitionRequest): RecognitionStream {
  queueMicrotask(() => request.handlers?.onError?.(message));
  const none: RecognizedUtterance[] = [];
  return { write: () => undefined, pause: () => undefined, resume: () => undefined, close: () => Promise.resolve(none) };
}
