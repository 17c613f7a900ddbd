/**
 * @module The sandbox far end's media: one RTP session that plays the announcement once, then
 * echoes what it hears, with offer/answer (RFC 3264) for the INVITE and later re-INVITEs.
 */
import type { Clock } from '../../../common/clock.js';
import {
  CODECS, createAnswer, createOffer, encodeG711, FramePacer, isPortsExhausted, processAnswer, RtpSession,
  rtpMarker, rtpPaddingSize, rtpPayloadOffset, rtpPayloadType, rtpSequenceNumber, rtpSsrc, rtpTimestamp,
  RTP_HEADER_SIZE, writeRtpHeader,
  type LocalCapabilities, type NegotiatedAudio, type PortPool, type PortsExhausted, type SdpRejection,
} from '../../media/index.js';

const PTIME_MS = 20;
const SAMPLES_PER_FRAME = 160;
/** Sequencer source key of the announcement; echoed packets use the caller's SSRC (never negative). */
const ANNOUNCEMENT_SOURCE = -2;
/**
 * Echo packets waiting for their 20 ms slot. A caller whose clock runs faster than ours, or a
 * burst after a network stall, would otherwise grow the echo delay without bound: past this
 * many (200 ms) the oldest are dropped.
 */
const MAX_ECHO_QUEUE = 10;

/** Codecs of the sandbox carrier: G.711 both laws and RFC 4733 events. */
const SANDBOX_CODECS = [CODECS.PCMU, CODECS.PCMA, CODECS.TELEPHONE_EVENT] as const;

/** What opening the media needs. */
export interface SandboxMediaOptions {
  clock: Clock;
  ports: PortPool;
  host: string;
  /** 8 kHz PCM played once after the answer. */
  announcement: Int16Array;
}

interface QueuedPacket {
  packet: Buffer;
  source: number;
  /** False for RFC 4733 packets, whose timestamp is the event's start (RFC 4733 §2.5.1.1). */
  advancesClock: boolean;
}

/** The negotiated state the player works from. */
interface Wiring {
  encoding: 'PCMU' | 'PCMA';
  sendPayloadType: number;
  receivePayloadType: number;
  sendEventPayloadType: number | null;
  receiveEventPayloadType: number | null;
  canSend: boolean;
  canReceive: boolean;
}

/**
 * Checks an INVITE offer before ringing, so a bad one is refused at once (488, RFC 3261
 * §21.4.26) rather than after the ring time. The port in the trial answer is never used.
 */
export function checkOffer(offerSdp: string, host: string): SdpRejection | null {
  const trial = createAnswer(offerSdp, { address: host, port: 9, codecs: SANDBOX_CODECS, sessionId: 1, sessionVersion: 1 });
  return 'error' in trial ? trial : null;
}

/** One call's media at the sandbox far end. */
export class SandboxMedia {
  readonly #session: RtpSession;
  readonly #announcement: Int16Array;
  readonly #pacer: FramePacer;
  readonly #host: string;
  readonly #sessionId = Math.floor(Math.random() * 1e9);
  readonly #pcm = new Int16Array(SAMPLES_PER_FRAME);
  #sessionVersion = 1;
  #lastSdp: string | null = null;
  #wiring: Wiring | null = null;
  #position = 0;
  #localSeq = 0;
  #queue: QueuedPacket[] = [];
  #awaitingAnswer = false;
  #closed = false;

  private constructor(session: RtpSession, options: SandboxMediaOptions) {
    this.#session = session;
    this.#announcement = options.announcement;
    this.#host = options.host;
    this.#pacer = new FramePacer(options.clock, PTIME_MS, (frame) => this.#onFrame(frame));
    // The far end's session is its own for its whole life; close() frees it.
    session.take({ onRtp: (packet) => this.#onRtp(packet) });
  }

  /** Binds an RTP/RTCP pair on the host from the pool. */
  static async open(options: SandboxMediaOptions): Promise<SandboxMedia | PortsExhausted> {
    const session = await RtpSession.open({ clock: options.clock, ports: options.ports, bindAddress: options.host, mediaTimeoutMs: 0 });
    if (isPortsExhausted(session)) return session;
    return new SandboxMedia(session, options);
  }

  get localPort(): number {
    return this.#session.localPort;
  }

  /** True while an offer of ours (in a 2xx to an offer-less INVITE) waits for the answer in the ACK. */
  get awaitingAnswer(): boolean {
    return this.#awaitingAnswer;
  }

  /**
   * Answers an offer (the INVITE's or a re-INVITE's) and applies it: new remote address, codec
   * and direction (RFC 3264 §6.1: sendonly is answered recvonly, inactive inactive). A rejected
   * offer leaves the current session unchanged (RFC 3264 §8).
   */
  answer(offerSdp: string): string | SdpRejection {
    let result = createAnswer(offerSdp, this.#capabilities());
    if ('error' in result) return result;
    // RFC 3264 §8: the o= version grows only when the description changes.
    if (this.#lastSdp !== null && result.sdp !== this.#lastSdp) {
      this.#sessionVersion++;
      result = createAnswer(offerSdp, this.#capabilities());
      if ('error' in result) return result;
    }
    const applied = this.#apply(result.negotiated);
    if (applied !== null) return applied;
    this.#lastSdp = result.sdp;
    return result.sdp;
  }

  /**
   * Our offer, for an INVITE or re-INVITE that carried none (RFC 3261 §13.2.1: the answer then
   * comes in the ACK). Every codec is listed again, as RFC 3264 §8 allows a new offer to.
   */
  offer(): string {
    this.#sessionVersion++;
    this.#awaitingAnswer = true;
    const sdp = createOffer(this.#capabilities());
    this.#lastSdp = sdp;
    return sdp;
  }

  /** Applies the answer to {@link offer}; false when it is missing or unusable (the call then ends). */
  applyAnswer(answerSdp: string): boolean {
    this.#awaitingAnswer = false;
    const negotiated = processAnswer(answerSdp, this.#capabilities());
    return !('error' in negotiated) && this.#apply(negotiated) === null;
  }

  /** Starts the 20 ms pacing: the announcement first, then the echo. */
  start(): void {
    if (!this.#closed) this.#pacer.start();
  }

  /** Idempotent: stops pacing, closes the sockets and returns the ports to the pool. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#pacer.stop();
    this.#queue = [];
    this.#session.close();
  }

  describe(): string {
    const w = this.#wiring;
    return `sandbox media ${this.#session.describe()} ${w ? w.encoding : 'not negotiated'}`;
  }

  #capabilities(): LocalCapabilities {
    return {
      address: this.#host, port: this.#session.localPort, codecs: SANDBOX_CODECS, rtcpMux: true,
      sessionId: this.#sessionId, sessionVersion: this.#sessionVersion, username: 'sandbox',
    };
  }

  #apply(n: NegotiatedAudio): SdpRejection | null {
    const encoding = n.codec.encoding;
    if (encoding !== 'PCMU' && encoding !== 'PCMA') return { error: 'no-common-codec', status: 488, detail: `${encoding} is not G.711` };
    // RFC 2543 hold (c=0.0.0.0, kept by RFC 3264 §8.4 for compatibility): send nothing at all.
    const nowhere = n.remote.rtp.address === '0.0.0.0' || n.remote.rtp.port === 0;
    if (!nowhere) this.#session.setRemote(n.remote.rtp, { rtcp: n.remote.rtcp, rtcpMux: n.rtcpMux });
    const previous = this.#wiring;
    if (previous && (previous.encoding !== encoding || previous.receivePayloadType !== n.receivePayloadType)) this.#queue = [];
    this.#wiring = {
      encoding,
      sendPayloadType: n.codec.payloadType,
      receivePayloadType: n.receivePayloadType,
      sendEventPayloadType: n.telephoneEvent?.payloadType ?? null,
      receiveEventPayloadType: n.receiveTelephoneEventPayloadType,
      canSend: !nowhere && (n.direction === 'sendrecv' || n.direction === 'sendonly'),
      canReceive: n.direction === 'sendrecv' || n.direction === 'recvonly',
    };
    if (!this.#wiring.canSend) this.#queue = [];
    return null;
  }

  get #announcing(): boolean {
    return this.#position < this.#announcement.length;
  }

  #onFrame(frame: number): void {
    const w = this.#wiring;
    // On hold the announcement pauses where it is; the timestamp still follows the frame count,
    // so the gap shows in RTP time when it resumes (RFC 3550 §5.1).
    if (w === null || !w.canSend) return;
    if (this.#announcing) {
      const n = Math.min(SAMPLES_PER_FRAME, this.#announcement.length - this.#position);
      this.#pcm.set(this.#announcement.subarray(this.#position, this.#position + n));
      this.#pcm.fill(0, n);
      this.#position += n;
      const packet = Buffer.allocUnsafe(RTP_HEADER_SIZE + SAMPLES_PER_FRAME);
      writeRtpHeader(packet, w.sendPayloadType, this.#localSeq++ & 0xffff, (frame * SAMPLES_PER_FRAME) >>> 0, 0, false);
      encodeG711(w.encoding, this.#pcm, packet.subarray(RTP_HEADER_SIZE));
      this.#session.send(packet, ANNOUNCEMENT_SOURCE);
      return;
    }
    const next = this.#queue.shift();
    if (next) this.#session.send(next.packet, next.source, next.advancesClock);
  }

  /**
   * Queues a received packet for echo under our own payload type. Audio and RFC 4733 events are
   * both echoed, so a digit sent into a sandbox call comes back as a digit. The caller's SSRC is
   * the sequencer source, which keeps the caller's own sequence and timestamp spacing while
   * writing our SSRC (RFC 3550 §8.2). Anything heard during the announcement is dropped.
   */
  #onRtp(packet: Buffer): void {
    const w = this.#wiring;
    if (w === null || !w.canSend || !w.canReceive || this.#announcing || this.#closed) return;
    const pt = rtpPayloadType(packet);
    const isEvent = w.receiveEventPayloadType !== null && pt === w.receiveEventPayloadType;
    if (pt !== w.receivePayloadType && !isEvent) return;
    const sendPt = isEvent ? w.sendEventPayloadType : w.sendPayloadType;
    const offset = rtpPayloadOffset(packet);
    const end = packet.length - rtpPaddingSize(packet);
    if (sendPt === null || offset < 0 || end <= offset) return;
    // A fresh header: the caller's CSRCs, extensions and padding are not ours to repeat.
    const out = Buffer.allocUnsafe(RTP_HEADER_SIZE + end - offset);
    writeRtpHeader(out, sendPt, rtpSequenceNumber(packet), rtpTimestamp(packet), 0, rtpMarker(packet));
    packet.copy(out, RTP_HEADER_SIZE, offset, end);
    this.#queue.push({ packet: out, source: rtpSsrc(packet), advancesClock: !isEvent });
    if (this.#queue.length > MAX_ECHO_QUEUE) this.#queue.shift();
  }
}
