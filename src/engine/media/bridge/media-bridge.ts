/**
 * @module Relays RTP between two legs: passthrough or G.711 transcoding, mute, hold, DTMF, taps.
 * What the legs hear while held is {@link HoldFill}'s, in hold-fill.ts.
 */
import type { Clock } from '../../../common/clock.js';
import { InvariantError } from '../../../common/errors.js';
import { GoertzelDtmfDetector } from '../dtmf/goertzel.js';
import { dtmfDigit, parseTelephoneEvent, TelephoneEventReceiver } from '../dtmf/rfc4733.js';
import { rtpPaddingSize, rtpPayloadOffset, rtpSsrc, rtpTimestamp, setRtpPayloadType } from '../rtp/packet.js';
import type { ReleaseSession } from '../rtp/rtp-session.js';
import type { AudioSource } from './audio-source.js';
import { ALAW_TO_ULAW, canBridge, decodeG711, isG711, ULAW_TO_ALAW, type BridgeLegConfig } from './bridge-leg.js';
import { DtmfSender } from './dtmf-sender.js';
import { HoldFill } from './hold-fill.js';
import { HoldMusicPlayer } from './hold-music-player.js';
import type { AudioTap, BridgeLegStats, LegName, MediaBridgeDelegate, MediaBridgeOptions, TapDirection } from './media-bridge-types.js';

export type { AudioTap, BridgeLegStats, LegName, MediaBridgeDelegate, MediaBridgeOptions, TapDirection } from './media-bridge-types.js';

interface LegState {
  readonly name: LegName;
  config: BridgeLegConfig;
  /** Gives the leg's session back (the bridge took it in {@link MediaBridge} or replaceLeg). */
  release: ReleaseSession;
  events: TelephoneEventReceiver;
  detector: GoertzelDtmfDetector | null;
  dtmf: DtmfSender | null;
  /** Audio from this leg to the other is muted. */
  muted: boolean;
  sendingDtmf: boolean;
  taps: Record<TapDirection, AudioTap | null>;
  dropped: number;
  digits: number;
}

/**
 * Largest payload relayed, in octets: an Ethernet MTU. A 20 ms G.711 packet carries 160; a larger
 * datagram is not audio of a real call, and taps decode at most this many samples.
 */
export const MAX_PAYLOAD = 1500;
const MAX_SAMPLES = MAX_PAYLOAD;
const SAMPLE_RATE = 8000;

/**
 * Joins two RTP sessions. When both legs use the same codec, packets are relayed in the buffer
 * they arrived in, with header fields rewritten in place: no copy and no allocation. PCMU and
 * PCMA legs are transcoded in place as well (one table lookup per byte). Decoding to PCM happens
 * only for an attached tap or in-band DTMF detection, so passthrough stays copy-free.
 */
export class MediaBridge {
  readonly #clock: Clock;
  readonly #legs: Record<LegName, LegState>;
  readonly #pcm = new Int16Array(MAX_SAMPLES);
  /** What each leg hears while held: hold music or silence (see {@link hold}). */
  readonly #fill: HoldFill;
  readonly delegate: MediaBridgeDelegate;
  #held = false;
  /** Leg a's hold music, while held with music. */
  #music: AudioSource | null = null;
  #closed = false;

  constructor(options: MediaBridgeOptions) {
    if (!canBridge(options.a.encoding, options.b.encoding)) {
      throw new InvariantError(`cannot bridge ${options.a.encoding} with ${options.b.encoding}: negotiate a common codec`);
    }
    this.#clock = options.clock;
    this.delegate = options.delegate ?? {};
    const a = this.#makeLeg('a', options.a);
    let b: LegState;
    try {
      b = this.#makeLeg('b', options.b);
    } catch (err) {
      // Leg b's session is owned by someone else (a bug): leg a's is given back, not kept.
      a.release();
      a.dtmf?.stop();
      throw err;
    }
    this.#legs = { a, b };
    this.#fill = new HoldFill(this.#clock, {
      a: (pcm, packet) => this.#sendGenerated(this.#legs.a, pcm, packet),
      b: (pcm, packet) => this.#sendGenerated(this.#legs.b, pcm, packet),
    });
  }

  /** Mutes or unmutes the audio flowing from leg `from` to the other leg. */
  setMute(from: LegName, muted: boolean): void {
    this.#legs[from].muted = muted;
    this.#stopRelays();
  }

  /**
   * Puts the call on hold: no audio flows between the legs. Each leg's far end gets a packet every
   * 20 ms all the same, so that no media time-out fires at a carrier or a platform: leg a (the
   * caller) hears `music`, paced at 20 ms, and otherwise silence, as does leg b. A leg whose
   * negotiated direction lets it send nothing (RFC 3264 §5.1) sends nothing: its session drops
   * the packets. Returns false when music was asked for but leg a's codec cannot carry it.
   */
  hold(options: { music?: AudioSource } = {}): boolean {
    this.#held = true;
    this.#music = options.music ?? null;
    this.#stopRelays();
    return this.#startFill();
  }

  resume(): void {
    this.#held = false;
    this.#music = null;
    this.#fill.stop();
  }

  /** Plays hold music or silence onto both legs, in their current codecs (see {@link HoldFill.start}). */
  #startFill(): boolean {
    return this.#fill.start({ a: this.#legs.a.config, b: this.#legs.b.config }, this.#music);
  }

  get isHeld(): boolean {
    return this.#held;
  }

  /** Sends RFC 4733 digits to `leg`; returns what could not be sent (all of it without telephone-event). */
  sendDtmf(leg: LegName, digits: string, durationMs = 100): string {
    const state = this.#legs[leg];
    return state.dtmf ? state.dtmf.send(digits, durationMs) : digits;
  }

  /** Attaches (or with null, removes) a tap on one leg and direction. */
  setTap(leg: LegName, direction: TapDirection, tap: AudioTap | null): void {
    const state = this.#legs[leg];
    if (tap && !isG711(state.config.encoding)) throw new InvariantError(`taps need G.711, leg ${leg} has ${state.config.encoding}`);
    state.taps[direction] = tap;
    this.#stopRelays();
  }

  /**
   * Swaps a leg's session (transfer, agent swap). The other leg keeps its session, whose
   * sequencer sees a new source and keeps SSRC, sequence and timestamp continuous for its far end.
   * The old session is given back, not closed: its owner closes it. The new one is taken (it may
   * be the same session, re-negotiated).
   */
  replaceLeg(name: LegName, config: BridgeLegConfig): void {
    const other = this.#legs[name === 'a' ? 'b' : 'a'];
    if (!canBridge(config.encoding, other.config.encoding)) throw new InvariantError(`cannot bridge ${config.encoding} with ${other.config.encoding}`);
    const old = this.#legs[name];
    this.#stopRelays();
    old.release();
    old.dtmf?.stop();
    const fresh = this.#makeLeg(name, config);
    fresh.muted = old.muted;
    fresh.taps = old.taps;
    this.#legs[name] = fresh;
    // What a held leg hears goes on in the new leg's codec and payload type.
    if (this.#held) this.#startFill();
  }

  stats(): Record<LegName, BridgeLegStats> {
    const of = (leg: LegState): BridgeLegStats => ({ ...leg.config.session.stats(), packetsDropped: leg.dropped, digitsReceived: leg.digits });
    return { a: of(this.#legs.a), b: of(this.#legs.b) };
  }

  describe(): string {
    const { a, b } = this.#legs;
    return `bridge ${a.config.encoding}:${a.config.session.localPort} <-> ${b.config.encoding}:${b.config.session.localPort}${this.#held ? ' (held)' : ''}`;
  }

  /** Idempotent: stops generated audio and gives both sessions back (their owner closes them). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#fill.stop();
    this.#stopRelays();
    for (const leg of [this.#legs.a, this.#legs.b]) {
      leg.dtmf?.stop();
      leg.release();
    }
  }

  /** Takes the leg's session first: a session owned by someone else throws before anything starts. */
  #makeLeg(name: LegName, config: BridgeLegConfig): LegState {
    const leg: LegState = {
      name,
      config,
      release: () => undefined,
      events: new TelephoneEventReceiver(),
      detector: config.detectInbandDtmf && isG711(config.encoding) ? new GoertzelDtmfDetector() : null,
      dtmf: null,
      muted: false,
      sendingDtmf: false,
      taps: { received: null, sent: null },
      dropped: 0,
      digits: 0,
    };
    leg.release = config.session.take({ onRtp: (packet) => this.#onPacket(leg, packet) });
    if (config.sendEventPayloadType !== null) {
      leg.dtmf = new DtmfSender(config.session, { clock: this.#clock, payloadType: config.sendEventPayloadType });
      leg.dtmf.onActiveChange = (active) => {
        leg.sendingDtmf = active;
      };
    }
    return leg;
  }

  #other(leg: LegState): LegState {
    return this.#legs[leg.name === 'a' ? 'b' : 'a'];
  }

  #onPacket(from: LegState, packet: Buffer): void {
    const pt = packet[1]! & 0x7f;
    if (pt === from.config.receivePayloadType) this.#onAudio(from, this.#other(from), packet);
    else if (pt === from.config.receiveEventPayloadType) this.#onEvent(from, this.#other(from), packet);
    else from.dropped++;
  }

  #onAudio(from: LegState, to: LegState, packet: Buffer): void {
    const offset = rtpPayloadOffset(packet);
    const end = packet.length - rtpPaddingSize(packet);
    if (offset < 0 || end - offset > MAX_PAYLOAD) {
      from.dropped++;
      return;
    }
    const encoding = from.config.encoding;
    if ((from.taps.received !== null || from.detector !== null) && isG711(encoding)) this.#inspect(from, packet, offset, end, encoding);
    if (from.muted || this.#held || to.sendingDtmf) return;
    const toEncoding = to.config.encoding;
    if (toEncoding !== encoding) {
      const map = encoding === 'PCMU' ? ULAW_TO_ALAW : ALAW_TO_ULAW;
      for (let i = offset; i < end; i++) packet[i] = map[packet[i]!]!;
    }
    if ((packet[1]! & 0x7f) !== to.config.sendPayloadType) setRtpPayloadType(packet, to.config.sendPayloadType);
    const tap = to.taps.sent;
    if (tap !== null && isG711(toEncoding)) {
      const n = decodeG711(toEncoding, packet.subarray(offset, end), this.#pcm);
      tap({ pcm: this.#pcm.subarray(0, n), sampleRate: SAMPLE_RATE, timestamp: rtpTimestamp(packet), receivedAt: this.#clock.monotonic() });
    }
    const source = rtpSsrc(packet);
    to.config.session.send(packet, source);
    // With nothing to do but rewrite headers, the media I/O relays the rest of this stream itself.
    if (tap === null && from.taps.received === null && from.detector === null && toEncoding === encoding && !from.config.session.relaying) {
      from.config.session.relayTo(to.config.session, { ssrc: source, payloadType: from.config.receivePayloadType, outPayloadType: to.config.sendPayloadType });
    }
  }

  /** Back to JavaScript for every packet, both ways: the bridge's state changed. Relays restart with the next packet that qualifies. */
  #stopRelays(): void {
    this.#legs.a.config.session.stopRelay();
    this.#legs.b.config.session.stopRelay();
  }

  /** Decodes for the received tap and the in-band detector; runs only when one of them is present. */
  #inspect(from: LegState, packet: Buffer, offset: number, end: number, encoding: 'PCMU' | 'PCMA'): void {
    const n = decodeG711(encoding, packet.subarray(offset, end), this.#pcm);
    const pcm = this.#pcm.subarray(0, n);
    const digit = from.detector?.process(pcm) ?? null;
    if (digit !== null) {
      from.digits++;
      this.delegate.onDtmf?.(from.name, digit, 'inband');
    }
    from.taps.received?.({ pcm, sampleRate: SAMPLE_RATE, timestamp: rtpTimestamp(packet), receivedAt: this.#clock.monotonic() });
  }

  #onEvent(from: LegState, to: LegState, packet: Buffer): void {
    const offset = rtpPayloadOffset(packet);
    const event = offset < 0 ? null : parseTelephoneEvent(packet, offset);
    if (event === null) {
      from.dropped++;
      return;
    }
    for (const done of from.events.receive(rtpTimestamp(packet), event)) {
      const digit = dtmfDigit(done.event);
      if (digit === null) continue;
      from.digits++;
      this.delegate.onDtmf?.(from.name, digit, 'rfc4733');
    }
    const pt = to.config.sendEventPayloadType;
    if (from.muted || this.#held || to.sendingDtmf || pt === null) return;
    setRtpPayloadType(packet, pt);
    // Event packets repeat their start timestamp, so they must not move the sequencer's clock.
    to.config.session.send(packet, rtpSsrc(packet), false);
  }

  #sendGenerated(to: LegState, pcm: Int16Array, packet: Buffer): void {
    to.taps.sent?.({ pcm, sampleRate: SAMPLE_RATE, timestamp: rtpTimestamp(packet), receivedAt: this.#clock.monotonic() });
    to.config.session.send(packet, HoldMusicPlayer.SOURCE);
  }
}
