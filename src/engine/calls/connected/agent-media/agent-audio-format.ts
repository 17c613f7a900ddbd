/** @module Conversions between the carrier's G.711 at 8 kHz and an agent link's audio format (µ-law or pcm16 LE). */
import { ALAW_TO_ULAW, createResampler, decodeG711, encodeG711, SUPPORTED_RATES, type Resampler } from '../../../media/index.js';
import type { AgentAudioFormat } from '../../ports.js';

/** The carrier codecs the agent leg decodes and encodes. */
export type CarrierCodec = 'PCMU' | 'PCMA';

export const CARRIER_RATE = 8000;
export const FRAME_MS = 20;
/** Work in slices of at most 20 ms at 48 kHz, so scratch buffers stay fixed whatever the chunk size. */
const SLICE_SAMPLES = 960;

/** `mulaw/8000`, as shown in the session stats. */
export const describeFormat = (format: AgentAudioFormat): string => `${format.encoding}/${format.sampleRate}`;

/** Throws on a format no agent link should declare: a bug in the provider adapter, not a call outcome. */
export function checkAgentFormat(format: AgentAudioFormat): void {
  const encodingOk = format.encoding === 'mulaw' || format.encoding === 'pcm16';
  if (!encodingOk || !(SUPPORTED_RATES as readonly number[]).includes(format.sampleRate)) {
    throw new RangeError(`unsupported agent audio format ${describeFormat(format)}`);
  }
}

const bytesPerSample = (format: AgentAudioFormat): number => (format.encoding === 'pcm16' ? 2 : 1);

/**
 * Carrier → agent: turns carrier audio of any packet time into frames of exactly 20 ms in the
 * agent's input format. µ-law at 8 kHz takes the carrier payload bytes as they are (PCMU) or
 * through a code-word table (PCMA), without decoding; other formats take decoded 8 kHz PCM.
 */
export class CallerAudioEncoder {
  readonly format: AgentAudioFormat;
  readonly frameBytes: number;
  /** True when {@link pushPayload} may be used instead of decoding. */
  readonly takesG711: boolean;
  framesSent = 0;
  readonly #resampler: Resampler;
  readonly #emit: (frame: Buffer) => void;
  readonly #frame: Buffer;
  #fill = 0;

  private constructor(format: AgentAudioFormat, resampler: Resampler, emit: (frame: Buffer) => void) {
    this.format = format;
    this.frameBytes = (format.sampleRate * FRAME_MS * bytesPerSample(format)) / 1000;
    this.takesG711 = format.encoding === 'mulaw' && format.sampleRate === CARRIER_RATE;
    this.#resampler = resampler;
    this.#emit = emit;
    this.#frame = Buffer.alloc(this.frameBytes);
  }

  static async create(format: AgentAudioFormat, emit: (frame: Buffer) => void): Promise<CallerAudioEncoder> {
    checkAgentFormat(format);
    return new CallerAudioEncoder(format, await createResampler(CARRIER_RATE, format.sampleRate), emit);
  }

  /** Appends a G.711 payload (only when {@link takesG711}). */
  pushPayload(codec: CarrierCodec, payload: Uint8Array): void {
    let i = 0;
    while (i < payload.length) {
      const k = Math.min(this.frameBytes - this.#fill, payload.length - i);
      if (codec === 'PCMU') this.#frame.set(payload.subarray(i, i + k), this.#fill);
      else for (let j = 0; j < k; j++) this.#frame[this.#fill + j] = ALAW_TO_ULAW[payload[i + j]!]!;
      this.#fill += k;
      i += k;
      if (this.#fill === this.frameBytes) this.#send();
    }
  }

  /** Appends decoded carrier audio at 8 kHz. */
  pushPcm(pcm8: Int16Array): void {
    const pcm = this.#resampler.process(pcm8);
    const width = bytesPerSample(this.format);
    let i = 0;
    while (i < pcm.length) {
      const k = Math.min((this.frameBytes - this.#fill) / width, pcm.length - i);
      if (width === 1) {
        encodeG711('PCMU', pcm.subarray(i, i + k), this.#frame.subarray(this.#fill, this.#fill + k));
      } else {
        for (let j = 0; j < k; j++) this.#frame.writeInt16LE(pcm[i + j]!, this.#fill + 2 * j);
      }
      this.#fill += k * width;
      i += k;
      if (this.#fill === this.frameBytes) this.#send();
    }
  }

  /** Drops a partial frame (hold starts: the agent must not get caller audio from before it). */
  reset(): void {
    this.#fill = 0;
  }

  close(): void {
    this.#resampler.close();
  }

  #send(): void {
    this.#fill = 0;
    this.framesSent++;
    // A copy per frame: the AgentLink port does not promise to be done with the buffer on return.
    this.#emit(Buffer.from(this.#frame));
  }
}

/**
 * Agent → carrier: decodes agent audio chunks of any size in the link's output format to 8 kHz
 * PCM. An odd byte at the end of a pcm16 chunk is kept and joined to the next chunk.
 */
export class AgentAudioDecoder {
  readonly format: AgentAudioFormat;
  readonly #resampler: Resampler;
  readonly #sink: (pcm8: Int16Array) => void;
  readonly #scratch = new Int16Array(SLICE_SAMPLES);
  /** The low byte of a pcm16 sample split across chunks, or -1. */
  #carry = -1;

  private constructor(format: AgentAudioFormat, resampler: Resampler, sink: (pcm8: Int16Array) => void) {
    this.format = format;
    this.#resampler = resampler;
    this.#sink = sink;
  }

  static async create(format: AgentAudioFormat, sink: (pcm8: Int16Array) => void): Promise<AgentAudioDecoder> {
    checkAgentFormat(format);
    return new AgentAudioDecoder(format, await createResampler(format.sampleRate, CARRIER_RATE), sink);
  }

  push(chunk: Uint8Array): void {
    if (this.format.encoding === 'mulaw') this.#pushMulaw(chunk);
    else this.#pushPcm16(chunk);
  }

  /** Forgets a split sample (after clear, the next chunk starts a new stream). */
  reset(): void {
    this.#carry = -1;
  }

  close(): void {
    this.#resampler.close();
  }

  #pushMulaw(chunk: Uint8Array): void {
    for (let pos = 0; pos < chunk.length; pos += SLICE_SAMPLES) {
      const n = decodeG711('PCMU', chunk.subarray(pos, pos + SLICE_SAMPLES), this.#scratch);
      this.#deliver(n);
    }
  }

  #pushPcm16(chunk: Uint8Array): void {
    const out = this.#scratch;
    let pos = 0;
    while (pos < chunk.length) {
      let n = 0;
      if (this.#carry >= 0) {
        out[n++] = (((chunk[pos]! << 8) | this.#carry) << 16) >> 16;
        this.#carry = -1;
        pos++;
      }
      for (; n < SLICE_SAMPLES && pos + 1 < chunk.length; pos += 2) out[n++] = (((chunk[pos + 1]! << 8) | chunk[pos]!) << 16) >> 16;
      if (n < SLICE_SAMPLES && pos === chunk.length - 1) this.#carry = chunk[pos++]!;
      if (n > 0) this.#deliver(n);
    }
  }

  #deliver(n: number): void {
    this.#sink(this.#resampler.process(this.#scratch.subarray(0, n)));
  }
}
