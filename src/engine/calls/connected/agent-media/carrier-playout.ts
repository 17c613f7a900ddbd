/** @module Agent → carrier: a playout queue of agent audio that a 20 ms pacer drains onto the RTP leg, with hold music or silence in its place. */
import type { Clock } from '../../../../common/clock.js';
import {
  encodeG711, FramePacer, PlayoutBuffer, RTP_HEADER_SIZE, writeRtpHeader, type AudioSource, type RtpSession,
} from '../../../media/index.js';
import { CARRIER_RATE, FRAME_MS, type CarrierCodec } from './agent-audio-format.js';
import type { CalleeDigits } from './callee-digits.js';

const FRAME_SAMPLES = (CARRIER_RATE * FRAME_MS) / 1000;
/** Sequencer source key of everything the agent leg sends (media's hold music and DTMF use -1 and below -2). */
const LEG_SOURCE = -1000;

/** Options of {@link CarrierPlayout}. */
export interface CarrierPlayoutOptions {
  clock: Clock;
  rtp: RtpSession;
  codec: CarrierCodec;
  /** The negotiated payload type of `codec` on the carrier leg. */
  payloadType: number;
  /** Played while held; silence without one. */
  holdMusic: AudioSource | null;
  /** A mark's audio has been played (or flushed: the agent only needs to know it is done). */
  onMarkPlayed: (name: string) => void;
  /** Agent audio as played (not while held), with the packet's RTP timestamp, for the recording. */
  onAgentFrame: (pcm: Int16Array, timestamp: number) => void;
  /** Whatever the carrier party hears, every frame: the echo guard's reference. */
  onHeard: (pcm: Int16Array) => void;
  /** While true, the carrier party hears hold music (or silence), never agent audio. */
  isHeld: () => boolean;
  /** Digits toward the carrier party: while some wait, they are played instead of agent audio, which waits. */
  digits?: CalleeDigits;
}

/**
 * Agent audio, decoded to 8 kHz, waits in a playout queue; every 20 ms the pacer takes one frame
 * (silence when the queue is empty, so the carrier's media timers never see a gap) and sends it
 * as one G.711 packet. While held (`isHeld`), hold music or silence goes out instead and the
 * queue is left alone. {@link flush} empties the queue at once: the next packet is silence.
 */
export class CarrierPlayout {
  framesToCarrier = 0;
  readonly #o: CarrierPlayoutOptions;
  readonly #playout: PlayoutBuffer;
  readonly #pacer: FramePacer;
  readonly #framePcm = new Int16Array(FRAME_SAMPLES);
  readonly #silence = new Int16Array(FRAME_SAMPLES);
  /** Whether the last packet sent carried agent audio (the agent is talking even if nothing is queued). */
  #agentAudible = false;
  #codec: CarrierCodec;
  #payloadType: number;
  #seq = 0;
  #ts = 0;
  /** The negotiated telephone-event payload type toward the carrier, null without one. */
  #eventPayloadType: number | null = null;
  /** RFC 4733 §2.5.1.1: every packet of an event carries the timestamp of its start. */
  #eventTs = 0;

  constructor(options: CarrierPlayoutOptions) {
    this.#o = options;
    this.#codec = options.codec;
    this.#payloadType = options.payloadType;
    this.#playout = new PlayoutBuffer({ sampleRate: CARRIER_RATE, onMark: (name) => options.onMarkPlayed(name) });
    this.#pacer = new FramePacer(options.clock, FRAME_MS, () => this.#onFrame());
  }

  /** The agent is audible: audio is queued, or the last packet carried some. */
  get agentTalking(): boolean {
    return this.#playout.bufferedMs > 0 || this.#agentAudible;
  }

  get stats(): { framesPlayed: number; underruns: number; bufferedMs: number } {
    const s = this.#playout.stats;
    return { framesPlayed: s.framesPlayed, underruns: s.underruns, bufferedMs: Math.round(this.#playout.bufferedMs) };
  }

  /** Queues decoded agent audio at 8 kHz. */
  push(pcm8: Int16Array): void {
    this.#playout.push(pcm8);
  }

  /** Answers `name` once everything queued before it has played. */
  mark(name: string): void {
    this.#playout.mark(name);
  }

  /** Drops everything queued (clear, barge-in, hold); pending marks are answered. */
  flush(): void {
    this.#playout.flush();
  }

  /** The carrier leg moved to another codec (a re-offer): packets from the next one on are in it. */
  setFormat(codec: CarrierCodec, payloadType: number, eventPayloadType: number | null = this.#eventPayloadType): void {
    this.#codec = codec;
    this.#payloadType = payloadType;
    this.#eventPayloadType = eventPayloadType;
  }

  /** Frame 0 goes out now, then one every 20 ms. */
  start(): void {
    this.#pacer.start();
  }

  stop(): void {
    this.#pacer.stop();
  }

  /** Every 20 ms: one packet of agent audio, hold music or silence. */
  #onFrame(): void {
    const pcm = this.#framePcm;
    const digits = this.#o.digits;
    if (digits?.active && !this.#o.isHeld()) {
      this.#agentAudible = false;
      const frame = digits.next(pcm);
      if (frame.kind === 'event') return this.#sendEvent(frame.payload, frame.marker, frame.first);
      this.#o.onAgentFrame(pcm, this.#ts);
    } else if (this.#o.isHeld()) {
      this.#agentAudible = false;
      const n = this.#o.holdMusic?.read(pcm) ?? 0;
      if (n < pcm.length) pcm.fill(0, n);
    } else {
      const played = this.#playout.stats.framesPlayed;
      this.#playout.read(pcm);
      this.#agentAudible = this.#playout.stats.framesPlayed !== played;
      this.#o.onAgentFrame(pcm, this.#ts);
    }
    // Whatever the carrier party hears may come back as echo.
    this.#o.onHeard(pcm);
    // The socket holds the packet until it is sent: a fresh buffer per packet, as media's players do.
    const packet = Buffer.allocUnsafe(RTP_HEADER_SIZE + FRAME_SAMPLES);
    // Our own continuous numbering; the session's sequencer maps it into the leg's stream (RFC 3550 §5.1).
    writeRtpHeader(packet, this.#payloadType, this.#seq, this.#ts, 0, false);
    encodeG711(this.#codec, pcm, packet.subarray(RTP_HEADER_SIZE));
    this.#seq = (this.#seq + 1) & 0xffff;
    this.#ts = (this.#ts + FRAME_SAMPLES) >>> 0;
    this.framesToCarrier++;
    this.#o.rtp.send(packet, LEG_SOURCE);
  }

  /** One RFC 4733 packet in the audio's place: the stream's sequence, the event's start timestamp (§2.5.1.1). */
  #sendEvent(payload: Buffer, marker: boolean, first: boolean): void {
    if (first) this.#eventTs = this.#ts;
    const packet = Buffer.allocUnsafe(RTP_HEADER_SIZE + payload.length);
    writeRtpHeader(packet, this.#eventPayloadType ?? 101, this.#seq, this.#eventTs, 0, marker);
    payload.copy(packet, RTP_HEADER_SIZE);
    this.#seq = (this.#seq + 1) & 0xffff;
    this.#ts = (this.#ts + FRAME_SAMPLES) >>> 0;
    this.#o.onHeard(this.#silence);
    // Only the start moves the stream's clock: the updates repeat the start's timestamp.
    this.#o.rtp.send(packet, LEG_SOURCE, first);
  }
}
