/** @module Plays an audio source onto a leg as G.711 RTP, one packet every 20 ms by absolute deadline. */
import type { Clock } from '../../../common/clock.js';
import { RTP_HEADER_SIZE, writeRtpHeader } from '../rtp/packet.js';
import type { AudioSource } from './audio-source.js';
import { encodeG711 } from './bridge-leg.js';
import { FramePacer } from './frame-pacer.js';

const PTIME_MS = 20;
const SAMPLES = 160;

/**
 * Turns a PCM source into RTP packets for the bridge to send. The packet header carries a local
 * sequence and timestamp; the leg's sequencer maps them into the leg's continuous stream.
 */
export class HoldMusicPlayer {
  /** Sequencer source key of hold music. */
  static readonly SOURCE = -1;
  readonly #pacer: FramePacer;
  readonly #emit: (pcm: Int16Array, packet: Buffer) => void;
  readonly #pcm = new Int16Array(SAMPLES);
  #source: AudioSource | null = null;
  #encoding: 'PCMU' | 'PCMA' = 'PCMU';
  #payloadType = 0;
  #seq = 0;

  constructor(clock: Clock, emit: (pcm: Int16Array, packet: Buffer) => void) {
    this.#emit = emit;
    this.#pacer = new FramePacer(clock, PTIME_MS, (frame) => this.#onFrame(frame));
  }

  start(source: AudioSource, encoding: 'PCMU' | 'PCMA', payloadType: number): void {
    this.stop();
    this.#source = source;
    this.#encoding = encoding;
    this.#payloadType = payloadType;
    this.#pacer.start();
  }

  stop(): void {
    this.#pacer.stop();
    this.#source = null;
  }

  #onFrame(frame: number): void {
    const source = this.#source;
    if (source === null) return;
    const n = source.read(this.#pcm);
    if (n < SAMPLES) this.#pcm.fill(0, n);
    // Each packet is handed to the socket, which holds it until sent: a fresh buffer per frame.
    const packet = Buffer.allocUnsafe(RTP_HEADER_SIZE + SAMPLES);
    writeRtpHeader(packet, this.#payloadType, this.#seq++, frame * SAMPLES, 0, frame === 0);
    encodeG711(this.#encoding, this.#pcm, packet.subarray(RTP_HEADER_SIZE));
    this.#emit(this.#pcm, packet);
    if (n < SAMPLES) this.stop();
  }
}
