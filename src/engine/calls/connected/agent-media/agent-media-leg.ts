/** @module Joins the carrier's RTP leg to an agent link: caller audio, agent playout, marks, clear, caller speech and barge-in, DTMF and hold (docs/API.md "Calls" and docs/API.md "Agent WebSocket protocol"). */
import type { Clock } from '../../../../common/clock.js';
import { InvariantError } from '../../../../common/errors.js';
import {
  decodeG711, rtpPaddingSize, rtpPayloadOffset, rtpTimestamp,
  type AudioSource, type NegotiatedAudio, type ReleaseSession, type RtpSession,
} from '../../../media/index.js';
import type { AgentLink, AgentLinkHandlers, HoldSource } from '../../ports.js';
import { CARRIER_RATE, describeFormat, type AgentAudioDecoder, type CallerAudioEncoder, type CarrierCodec } from './agent-audio-format.js';
import { AgentConversions } from './agent-conversions.js';
import { AgentAudioTiming, agentMediaLegStats, type AgentMediaLegCounts } from './agent-media-leg-stats.js';
import { AgentEventBacklog } from './agent-event-backlog.js';
import { CallerKeys } from './caller-keys.js';
import { CarrierPlayout } from './carrier-playout.js';
import { CalleeDigits } from './callee-digits.js';
import type { CallerSpeechDetector, CallerSpeechEvent, CallerSpeechOptions } from './caller-speech-detector.js';
import { RecordingFeed, type RecordingPort } from '../recording-port.js';
import { isAgentMediaLegStopped, nextAgentMediaLegState, type AgentMediaLegEvent, type AgentMediaLegState } from './agent-media-leg-state.js';
import type { AgentMediaLegStats } from '../../session-snapshot.js';

/** Options of {@link AgentMediaLeg}. */
export interface AgentMediaLegOptions {
  clock: Clock;
  /** The carrier leg; its remote is already set. The leg's owner closes it. */
  rtp: RtpSession;
  /** The negotiated codec (PCMU or PCMA) and telephone-event payload types. */
  audio: NegotiatedAudio;
  /** Channel 'remote' gets the carrier party, 'agent' the agent as played; paused while held. */
  recorder?: RecordingPort | null;
  /** Played to the carrier party while held; silence without one. */
  holdMusic?: AudioSource | null;
  /** A digit from the carrier party (RFC 4733, tones without telephone-event, or SIP INFO through {@link AgentMediaLeg.receiveDigit}). */
  onDigit?: (digit: string) => void;
  /** The carrier party started or stopped speaking (the agent's echo excluded; nothing while held). */
  onCallerSpeech?: (event: CallerSpeechEvent) => void;
  /** VAD and echo guard tuning; defaults suit a telephone line. */
  callerSpeech?: CallerSpeechOptions;
  /** The carrier party's decoded audio, every packet while not held (answering-machine detection). */
  onRemoteAudio?: (pcm: Int16Array) => void;
}

/** Largest carrier payload taken: 120 ms of G.711, far above any ptime a carrier uses. */
const MAX_PAYLOAD_SAMPLES = 960;

/**
 * The media half of an answered call. Caller audio goes to the agent as 20 ms frames in the
 * link's input format (µ-law bytes pass through untouched when both sides speak PCMU). Agent
 * audio, in chunks of any size, is decoded to 8 kHz into the {@link CarrierPlayout} that paces it
 * onto the RTP leg every 20 ms, playing silence when it is empty so that the carrier's media
 * timers never see a gap. `clear` flushes the queue at once: the next packet is silence, so no
 * agent audio reaches the caller more than one packet time after the barge-in. The caller's audio
 * also goes through a VAD with an echo guard; for links that leave barge-in to the client, the
 * caller's speech start does what `clear` does.
 */
export class AgentMediaLeg {
  /** Handlers to pass when opening the AgentLink; events before {@link attach} are kept in order. */
  readonly handlers: Pick<AgentLinkHandlers, 'onAudio' | 'onClearAudio' | 'onMark'>;
  readonly #rtp: RtpSession;
  #codec: CarrierCodec;
  #audio: NegotiatedAudio;
  readonly #recording: RecordingFeed | null;
  readonly #onDigit: (digit: string) => void;
  #keys: CallerKeys;
  readonly #onCallerSpeech: (event: CallerSpeechEvent) => void;
  readonly #onRemoteAudio: ((pcm: Int16Array) => void) | null;
  readonly #speechOptions: CallerSpeechOptions;
  readonly #playout: CarrierPlayout;
  readonly #digits = new CalleeDigits();
  readonly #pcm = new Int16Array(MAX_PAYLOAD_SAMPLES);
  readonly #clock: Clock;
  /** What the agent sent before {@link attach}; null once attached or stopped. */
  #backlog: AgentEventBacklog | null = new AgentEventBacklog();
  #link: AgentLink | null = null;
  #encoder: CallerAudioEncoder | null = null;
  #decoder: AgentAudioDecoder | null = null;
  #speech: CallerSpeechDetector | null = null;
  /** Gives the RTP session back (docs/ARCHITECTURE.md "Media ownership"); set while attached. */
  #releaseRtp: ReleaseSession | null = null;
  /** Changed by {@link transition} only (agent-media-leg-state.ts has the diagram). */
  #state: AgentMediaLegState = 'idle';
  /** Who holds the leg: an API hold and the remote party's own can overlap. */
  readonly #holds: Record<HoldSource, boolean> = { api: false, remote: false };
  readonly #counts: AgentMediaLegCounts = { packetsDropped: 0, digits: 0, clears: 0, marks: 0, agentChunks: 0, agentChunksDiscarded: 0, bargeIns: 0 };
  readonly #timing: AgentAudioTiming;

  constructor(options: AgentMediaLegOptions) {
    const encoding = options.audio.codec.encoding;
    if (encoding !== 'PCMU' && encoding !== 'PCMA') throw new InvariantError(`the agent leg needs G.711 on the carrier side, not ${encoding}`);
    this.#clock = options.clock;
    this.#timing = new AgentAudioTiming(options.clock.monotonic());
    this.#rtp = options.rtp;
    this.#codec = encoding;
    this.#audio = options.audio;
    this.#recording = options.recorder ? new RecordingFeed(options.recorder, options.clock, CARRIER_RATE) : null;
    this.#onDigit = options.onDigit ?? (() => undefined);
    this.#keys = new CallerKeys(options.audio.telephoneEvent !== null, (digit) => this.receiveDigit(digit));
    this.#onCallerSpeech = options.onCallerSpeech ?? (() => undefined);
    this.#onRemoteAudio = options.onRemoteAudio ?? null;
    this.#speechOptions = options.callerSpeech ?? {};
    this.#playout = new CarrierPlayout({
      clock: options.clock, rtp: options.rtp, codec: encoding, payloadType: options.audio.codec.payloadType, holdMusic: options.holdMusic ?? null,
      onMarkPlayed: (name) => this.#link?.markPlayed(name),
      onAgentFrame: (pcm, timestamp) => this.#recording?.write('agent', pcm, timestamp),
      onHeard: (pcm) => this.#speech?.notePlayout(pcm),
      isHeld: () => this.#held,
      digits: this.#digits,
    });
    this.#playout.setFormat(encoding, options.audio.codec.payloadType, options.audio.telephoneEvent?.payloadType ?? null);
    this.handlers = {
      onAudio: (chunk) => this.#onAgentAudio(chunk),
      onClearAudio: () => this.#onClear(),
      onMark: (name) => this.#onMark(name),
    };
  }

  get isHeld(): boolean {
    return this.#held;
  }

  /** Held by anyone. */
  get #held(): boolean {
    return this.#holds.api || this.#holds.remote;
  }

  /** Detached or closed: nothing more goes to or comes from the agent. */
  get #stopped(): boolean {
    return isAgentMediaLegStopped(this.#state);
  }

  /** The one method that changes the leg's state: throws IllegalTransitionError on an event the state refuses. */
  #transition(event: AgentMediaLegEvent): void {
    this.#state = nextAgentMediaLegState(this.#state, event);
  }

  /**
   * After `link.start()` resolved (its formats are final then): sets up the conversions, plays
   * what the agent sent meanwhile, takes the RTP leg's audio and starts the 20 ms pacer.
   * Rejects (a bug) when the link declares a format the leg cannot convert.
   */
  async attach(link: AgentLink): Promise<void> {
    this.#transition('attach');
    if (this.#stopped) return;
    const conversions = await AgentConversions.create(link, {
      toAgent: (frame) => this.#link?.sendAudio(frame), toCarrier: (pcm8) => this.#playout.push(pcm8),
      speechOptions: this.#speechOptions, onSpeech: (event) => this.#onSpeech(event),
    });
    if (this.#stopped) {
      conversions.close();
      return;
    }
    const { encoder, decoder, speech } = conversions;
    this.#transition('ready');
    this.#link = link;
    this.#encoder = encoder;
    this.#decoder = decoder;
    this.#speech = speech;
    if (this.#held) speech.pause();
    if (this.#held) link.hold(this.#holds.api ? 'api' : 'remote');
    const backlog = this.#backlog;
    this.#backlog = null;
    backlog?.replay({ audio: (chunk) => this.#onAgentAudio(chunk), mark: (name) => this.#onMark(name), clear: () => this.#onClear() });
    // The packets are ours until detach; the media time-out stays with the call (RtpSession.watchMedia).
    this.#releaseRtp = this.#rtp.take({ onRtp: (packet) => this.#onRtp(packet) });
    this.#playout.start();
  }

  /**
   * docs/API.md "Calls": the agent gets no caller audio (and its hold event), agent audio is discarded,
   * the carrier party hears hold music or silence (RTP keeps flowing), the recording pauses. A
   * hold by the remote party itself (`remote`, RFC 3264 §8.4) does the same: what it sends
   * meanwhile is its hold music, not speech (docs/DECISIONS.md, "Hold and media direction").
   * The agent is told when the call goes from not held to held and back, with the source.
   */
  hold(source: HoldSource = 'api'): void {
    if (this.#stopped) return;
    const wasHeld = this.#held;
    this.#holds[source] = true;
    if (wasHeld) return;
    this.#link?.hold(source);
    this.#encoder?.reset();
    this.#speech?.pause();
    this.#flushPlayout();
    this.#recording?.pause();
  }

  unhold(source: HoldSource = 'api'): void {
    if (this.#stopped) return;
    const wasHeld = this.#held;
    this.#holds[source] = false;
    if (!wasHeld || this.#held) return;
    this.#speech?.resume();
    this.#recording?.resume();
    this.#link?.unhold(source);
  }

  /**
   * The carrier leg moved to another G.711 codec (a re-offer, RFC 3264 §8.3.2): caller audio is
   * decoded and agent audio encoded in it from the next packet on.
   */
  setAudio(audio: NegotiatedAudio): void {
    const encoding = audio.codec.encoding;
    if (encoding !== 'PCMU' && encoding !== 'PCMA') throw new InvariantError(`the agent leg needs G.711 on the carrier side, not ${encoding}`);
    this.#codec = encoding;
    this.#audio = audio;
    this.#keys = new CallerKeys(audio.telephoneEvent !== null, (digit) => this.receiveDigit(digit));
    this.#playout.setFormat(encoding, audio.codec.payloadType, audio.telephoneEvent?.payloadType ?? null);
  }

  /**
   * Stops the agent side for good (transfer, agent hang-up): the pacer stops, queued audio is
   * dropped without answering its marks, and the RTP session is given back, open, for another
   * owner to take (a transfer's bridge). Idempotent.
   */
  detach(): void {
    if (this.#stopped) return;
    this.#transition('detach');
    this.#playout.stop();
    this.#digits.clear();
    this.#link = null;
    this.#backlog = null;
    this.#playout.flush();
    this.#releaseRtp?.();
    this.#releaseRtp = null;
  }

  /**
   * Detaches and frees the conversions: the WASM resamplers and VAD detector (attach frees them
   * itself when it finishes after this). The RTP session, the link and the recorder belong to the
   * caller. Idempotent.
   */
  close(): void {
    if (this.#state === 'closed') return;
    this.detach();
    this.#transition('close');
    this.#encoder?.close();
    this.#decoder?.close();
    this.#speech?.close();
  }

  /** Live numbers for GET /v1/calls/{id} `session`. */
  stats(): AgentMediaLegStats {
    return agentMediaLegStats({
      codec: this.#codec, held: this.#held, rtp: this.#rtp, counts: this.#counts, playout: this.#playout, timing: this.#timing,
      encoder: this.#encoder, decoder: this.#decoder, speech: this.#speech, link: this.#link,
    });
  }

  describe(): string {
    const formats = this.#encoder && this.#decoder ? `${describeFormat(this.#encoder.format)} / ${describeFormat(this.#decoder.format)}` : 'not attached';
    return `agent leg ${this.#codec}:${this.#rtp.localPort} <-> agent ${formats}${this.#held ? ' (held)' : ''}`;
  }

  // Carrier -> agent.

  #onRtp(packet: Buffer): void {
    const pt = packet[1]! & 0x7f;
    if (pt === this.#audio.receivePayloadType) this.#onCarrierAudio(packet);
    else if (pt !== this.#audio.receiveTelephoneEventPayloadType || !this.#keys.receiveEvent(packet)) this.#counts.packetsDropped++;
  }

  #onCarrierAudio(packet: Buffer): void {
    const offset = rtpPayloadOffset(packet);
    const end = packet.length - rtpPaddingSize(packet);
    const encoder = this.#encoder;
    if (offset < 0 || end - offset > MAX_PAYLOAD_SAMPLES || encoder === null) {
      this.#counts.packetsDropped++;
      return;
    }
    if (this.#held) return;
    const payload = packet.subarray(offset, end);
    // Decoded for the VAD whatever the agent takes; µ-law agents still get the payload bytes as they are.
    const pcm = this.#pcm.subarray(0, decodeG711(this.#codec, payload, this.#pcm));
    this.#recording?.write('remote', pcm, rtpTimestamp(packet));
    this.#keys.listen(pcm);
    this.#onRemoteAudio?.(pcm);
    if (encoder.takesG711) encoder.pushPayload(this.#codec, payload);
    else encoder.pushPcm(pcm);
    // After the agent got the frame: a barge-in this packet causes must not delay the caller's audio.
    this.#speech?.writeCaller(pcm, this.#clock.monotonic());
  }

  /**
   * Caller speech (echo excluded by the detector). With a 'client' barge-in link, a start while
   * the agent is talking drops its queued audio at once, so the next packet is silence (within
   * 20 ms), and tells the link; 'platform' links send their own clear.
   */
  #onSpeech(event: CallerSpeechEvent): void {
    const link = this.#link;
    if (event === 'start' && link?.bargeIn === 'client' && this.#playout.agentTalking) {
      this.#counts.bargeIns++;
      this.#flushPlayout();
      link.interrupt?.();
    }
    this.#onCallerSpeech(event);
  }

  /** A key the carrier party pressed, from RFC 4733 packets, tones or a SIP INFO: counted, reported, passed to the agent. */
  receiveDigit(digit: string): void {
    this.#counts.digits++;
    this.#onDigit(digit);
    // docs/API.md "Calls": on hold the agent receives nothing from the caller, digits included.
    if (!this.#held) this.#link?.sendDtmf(digit);
  }

  // Agent -> carrier.

  /**
   * Plays `digits` (docs/API.md "Digits toward the callee") to the carrier party after those
   * queued before: RFC 4733 events when the leg negotiated telephone-event, else tones. Agent audio
   * waits meanwhile; `onSent` runs once the last frame is out. Nothing plays while held.
   */
  sendDigits(digits: string, onSent: () => void = () => undefined): void {
    if (this.#stopped) return;
    this.#digits.enqueue(digits, this.#audio.telephoneEvent !== null, onSent);
  }

  #onAgentAudio(chunk: Buffer): void {
    if (this.#stopped) return;
    this.#timing.heard(this.#clock.monotonic());
    if (this.#backlog !== null) {
      if (!this.#backlog.audio(chunk)) this.#counts.agentChunksDiscarded++;
      return;
    }
    this.#counts.agentChunks++;
    if (this.#held) {
      this.#counts.agentChunksDiscarded++;
      return;
    }
    this.#decoder?.push(chunk);
  }

  #onMark(name: string): void {
    if (this.#stopped) return;
    if (this.#backlog !== null) return this.#backlog.mark(name);
    this.#counts.marks++;
    // Audio discarded on hold has "played" as far as the agent can tell: answer at once.
    if (this.#held) this.#link?.markPlayed(name);
    else this.#playout.mark(name);
  }

  #onClear(): void {
    if (this.#stopped) return;
    if (this.#backlog !== null) return this.#backlog.clear();
    this.#counts.clears++;
    this.#flushPlayout();
  }

  #flushPlayout(): void {
    this.#decoder?.reset();
    this.#playout.flush();
  }
}
