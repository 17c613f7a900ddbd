/**
 * @module Stereo call recording (remote party left, agent right) written to a WAV file as the call
 * goes: where each channel's samples fall in time, and the metadata. The file writes are
 * wav-file-writer.ts's.
 */
import { endianness } from 'node:os';
import type { Clock } from '../../../common/clock.js';
import type { AudioFrame } from '../pipeline/audio-frame.js';
import type { AudioSink } from '../pipeline/audio-stage.js';
import { WavFileWriter } from './wav-file-writer.js';

/** Left is the remote party (carrier side), right is the agent. */
export type RecordingChannel = 'remote' | 'agent';
const CHANNEL_INDEX: Record<RecordingChannel, 0 | 1> = { remote: 0, agent: 1 };
export const RECORDING_SAMPLE_RATE = 8000;
const CHANNELS = 2;
const BYTES_PER_FRAME = CHANNELS * 2;

/** A stretch during which the recording was paused (hold). `atMs` is where it falls in the file. */
export interface PauseInterval {
  atMs: number;
  startedAt: string;
  endedAt: string | null;
  durationMs: number | null;
}

/** What a recording holds; also written beside it as `<path>.json`. */
export interface RecordingMetadata {
  path: string;
  sampleRate: number;
  channels: ['remote', 'agent'];
  startedAt: string;
  endedAt: string | null;
  /** Audio in the file (hold excluded). */
  durationMs: number;
  pauses: PauseInterval[];
  /** True once close() wrote the final header; a false one found at start-up needs repair. */
  finalized: boolean;
  /** Samples that arrived after their place in the file had been written. */
  lateSamplesDropped: number;
}

/** Options of {@link StereoWavRecorder.open}. */
export interface StereoRecorderOptions {
  path: string;
  clock: Clock;
  /** Audio gathered before each file write (and header update). Default 1000 ms. */
  writeChunkMs?: number;
  /** How long the faster channel waits for the slower one before gaps become silence. Default 500 ms. */
  alignWindowMs?: number;
  /** Disagreement between RTP time and arrival time that re-anchors a channel (new source). Default 1000 ms. */
  resyncMs?: number;
}

interface ChannelState {
  anchored: boolean;
  anchorTs: number;
  anchorPos: number;
}

const tsDiff = (a: number, b: number): number => (a - b) | 0;
const isoOf = (ms: number): string => new Date(ms).toISOString();

/**
 * Places each channel's frames on one timeline by RTP timestamp (anchored to arrival time at the
 * channel's first frame, re-anchored after a source change or hold), mixes them into interleaved
 * stereo in a small ring, and appends whole chunks to the file. Holes become silence. Writes are
 * buffered and serialised; the header's sizes are patched after each chunk, so a crash loses at
 * most one chunk plus the alignment window, and never fsyncs per frame.
 *
 * NOTE: a sender whose RTP clock runs slow against ours drifts late by its clock error (50 ppm
 * is 3 ms a minute) until the disagreement passes `resyncMs` and the channel re-anchors.
 */
export class StereoWavRecorder {
  readonly path: string;
  readonly #file: WavFileWriter;
  readonly #clock: Clock;
  readonly #alignFrames: number;
  readonly #resyncFrames: number;
  readonly #capacity: number;
  readonly #ring: Int16Array;
  readonly #chunk: Int16Array;
  #chunkFill = 0;
  /** Stereo frames handed to the chunk (everything before is final). */
  #flushedPos = 0;
  #maxHead = 0;
  #basePos = 0;
  #baseMono: number;
  #paused = false;
  #pausedMono = 0;
  readonly #channels: [ChannelState, ChannelState] = [
    { anchored: false, anchorTs: 0, anchorPos: 0 },
    { anchored: false, anchorTs: 0, anchorPos: 0 },
  ];
  readonly #meta: RecordingMetadata;
  #closing: Promise<RecordingMetadata> | undefined;

  private constructor(file: WavFileWriter, options: StereoRecorderOptions) {
    this.path = options.path;
    this.#file = file;
    this.#clock = options.clock;
    const perMs = RECORDING_SAMPLE_RATE / 1000;
    const chunkFrames = Math.max(160, Math.round((options.writeChunkMs ?? 1000) * perMs));
    this.#alignFrames = Math.round((options.alignWindowMs ?? 500) * perMs);
    this.#resyncFrames = Math.round((options.resyncMs ?? 1000) * perMs);
    // Room for the alignment window plus one large frame beyond it.
    this.#capacity = this.#alignFrames + 2 * RECORDING_SAMPLE_RATE;
    this.#ring = new Int16Array(this.#capacity * CHANNELS);
    this.#chunk = new Int16Array(chunkFrames * CHANNELS);
    this.#baseMono = this.#clock.monotonic();
    this.#meta = {
      path: this.path, sampleRate: RECORDING_SAMPLE_RATE, channels: ['remote', 'agent'],
      startedAt: isoOf(this.#clock.now()), endedAt: null, durationMs: 0, pauses: [], finalized: false, lateSamplesDropped: 0,
    };
  }

  /** Creates the file (never overwriting one) with an empty header, and its sidecar. */
  static async open(options: StereoRecorderOptions): Promise<StereoWavRecorder> {
    // Samples are copied as host-order Int16Array; WAV is little-endian.
    if (endianness() !== 'LE') throw new Error('StereoWavRecorder needs a little-endian host');
    const file = await WavFileWriter.create(options.path, { channels: CHANNELS, sampleRate: RECORDING_SAMPLE_RATE });
    const recorder = new StereoWavRecorder(file, options);
    recorder.#saveSidecar();
    await file.flushed();
    return recorder;
  }

  get isPaused(): boolean {
    return this.#paused;
  }

  /** A copy of the metadata as it stands. */
  get metadata(): RecordingMetadata {
    return structuredClone({ ...this.#meta, durationMs: this.#durationMs() });
  }

  /** An {@link AudioSink} for one channel, to attach to that leg's tap. Closing it does not close the recorder. */
  channelSink(channel: RecordingChannel): AudioSink {
    return {
      writeFrame: (frame) => this.writeFrame(channel, frame),
      describe: () => `record(${channel} → ${this.path})`,
      close: () => {},
    };
  }

  /** Adds one frame (8 kHz) of one channel. Ignored while paused or after close. */
  writeFrame(channel: RecordingChannel, frame: AudioFrame): void {
    if (this.#closing || this.isPaused) return;
    if (frame.sampleRate !== RECORDING_SAMPLE_RATE) throw new RangeError(`recording takes ${RECORDING_SAMPLE_RATE} Hz, got ${frame.sampleRate}`);
    const idx = CHANNEL_INDEX[channel];
    const ch = this.#channels[idx];
    const len = frame.pcm.length;
    // Where arrival time puts the frame: it ended when it arrived.
    const clockStart = this.#clockPos(frame.receivedAt) - len;
    let pos = ch.anchorPos + tsDiff(frame.timestamp, ch.anchorTs);
    if (!ch.anchored || Math.abs(pos - clockStart) > this.#resyncFrames) {
      // Not clamped to what is already written: a frame that started before the recording
      // (or before resume) loses its early samples instead of pushing the channel late.
      pos = clockStart;
      ch.anchored = true;
      ch.anchorPos = pos;
      ch.anchorTs = frame.timestamp;
    } else if (pos > clockStart) {
      // This frame came sooner than the anchor predicts: the anchor frame was delayed by
      // jitter. Track the least delay seen, so both channels align to their earliest arrival.
      ch.anchorPos -= pos - clockStart;
      pos = clockStart;
    }
    this.#place(idx, frame.pcm, pos);
  }

  /** Pauses for hold: what is pending is written, later frames are ignored, the interval is kept. */
  pause(): void {
    if (this.#closing || this.isPaused) return;
    this.#flushTo(this.#maxHead);
    this.#emitChunk();
    this.#paused = true;
    this.#pausedMono = this.#clock.monotonic();
    this.#meta.pauses.push({ atMs: this.#durationMs(), startedAt: isoOf(this.#clock.now()), endedAt: null, durationMs: null });
    for (const ch of this.#channels) ch.anchored = false;
    this.#saveSidecar();
  }

  /** Resumes after hold: the file continues where it stopped, with no silence for the hold. */
  resume(): void {
    if (this.#closing || !this.isPaused) return;
    this.#endPause();
    this.#saveSidecar();
  }

  /** Writes what is pending and the final header, closes the file. Idempotent. */
  close(): Promise<RecordingMetadata> {
    this.#closing ??= this.#finish();
    return this.#closing;
  }

  /** @internal Resolves when every write queued so far is on disk (for crash tests). */
  flushed(): Promise<void> {
    return this.#file.flushed();
  }

  async #finish(): Promise<RecordingMetadata> {
    if (this.isPaused) this.#endPause();
    this.#flushTo(this.#maxHead);
    this.#emitChunk();
    this.#meta.endedAt = isoOf(this.#clock.now());
    this.#meta.finalized = true;
    this.#saveSidecar();
    await this.#file.close();
    if (this.#file.error !== undefined) throw new Error(`recording ${this.path} failed to write`, { cause: this.#file.error });
    return this.metadata;
  }

  #endPause(): void {
    const now = this.#clock.monotonic();
    const last = this.#meta.pauses[this.#meta.pauses.length - 1];
    if (last) {
      last.endedAt = isoOf(this.#clock.now());
      last.durationMs = Math.round(now - this.#pausedMono);
    }
    this.#paused = false;
    this.#basePos = this.#flushedPos;
    this.#baseMono = now;
    this.#maxHead = this.#flushedPos;
  }

  #clockPos(mono: number): number {
    return this.#basePos + Math.floor(((mono - this.#baseMono) * RECORDING_SAMPLE_RATE) / 1000);
  }

  #durationMs(): number {
    return ((this.#flushedPos * 1000) / RECORDING_SAMPLE_RATE) | 0;
  }

  #place(idx: 0 | 1, pcm: Int16Array, pos: number): void {
    let start = 0;
    if (pos < this.#flushedPos) {
      start = Math.min(this.#flushedPos - pos, pcm.length);
      this.#meta.lateSamplesDropped += start;
    }
    const end = pos + pcm.length;
    if (end - this.#flushedPos > this.#capacity) this.#flushTo(end - this.#capacity);
    const ring = this.#ring;
    const cap = this.#capacity;
    let slot = (pos + start) % cap;
    for (let i = start; i < pcm.length; i++) {
      ring[slot * CHANNELS + idx] = pcm[i] as number;
      if (++slot === cap) slot = 0;
    }
    if (end > this.#maxHead) this.#maxHead = end;
    this.#flushTo(this.#maxHead - this.#alignFrames);
  }

  /** Moves stereo frames before `target` from the ring to the chunk, leaving silence behind. */
  #flushTo(target: number): void {
    const ring = this.#ring;
    const cap = this.#capacity;
    const chunkFrames = this.#chunk.length / CHANNELS;
    while (this.#flushedPos < target) {
      const slot = this.#flushedPos % cap;
      const n = Math.min(target - this.#flushedPos, cap - slot, chunkFrames - this.#chunkFill);
      const from = slot * CHANNELS;
      this.#chunk.set(ring.subarray(from, from + n * CHANNELS), this.#chunkFill * CHANNELS);
      ring.fill(0, from, from + n * CHANNELS);
      this.#chunkFill += n;
      this.#flushedPos += n;
      if (this.#chunkFill === chunkFrames) this.#emitChunk();
    }
  }

  /** Hands the chunk to the file. */
  #emitChunk(): void {
    if (this.#chunkFill === 0) return;
    const bytes = this.#chunkFill * BYTES_PER_FRAME;
    // A copy: the chunk is reused while the write is in flight.
    this.#file.append(Buffer.from(Buffer.from(this.#chunk.buffer, this.#chunk.byteOffset, bytes)));
    this.#chunkFill = 0;
  }

  #saveSidecar(): void {
    this.#file.saveSidecar(JSON.stringify({ ...this.#meta, durationMs: this.#durationMs() }, null, 2));
  }
}
