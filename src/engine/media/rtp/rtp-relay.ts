/**
 * @module A session's part in the media I/O's relay (see native/media-io): the rule out of it
 * toward another session, the sessions whose rules lead into it, and the accounting of packets
 * relayed without JavaScript, so that they count in both sessions as if they had gone through
 * RtpSession.send. Apart from rtp-session.ts, which decides when a relay may start and when its
 * far end, keys or sources end one; this module keeps the links between the two sessions right.
 */
import type { MediaSocket } from './media-socket.js';
import { RTP_HEADER_SIZE } from './packet.js';
import type { RtcpReporter } from './rtcp-reporter.js';
import type { MediaAddress } from './rtp-session-types.js';
import type { RtpSequencer } from './sequencer.js';

/** The stream a relay carries: the far end's SSRC and audio payload type, and the payload type it goes out with. */
export interface RelayedStream {
  ssrc: number;
  payloadType: number;
  outPayloadType: number;
}

/** Packets the media I/O relayed, every session of the process together, as reported so far. */
let relayedInProcess = 0;

/** RTP packets relayed by the media I/O without JavaScript, since the process started (for `/metrics`). */
export function relayedPacketsInProcess(): number {
  return relayedInProcess;
}

/** The relay links of one RTP session; every session has one, whether it relays or not. */
export class RtpRelay {
  readonly #socket: MediaSocket;
  readonly #sequencer: RtpSequencer;
  readonly #reporter: RtcpReporter;
  /** The rule out of this session and its offsets; kept after {@link stop}, for packets of the batch relayed before it. */
  #out: { target: RtpRelay; ssrc: number; sequenceOffset: number; timestampOffset: number } | null = null;
  #active = false;
  /** Relays into this session: their rules name its socket and far end. */
  readonly #into = new Set<RtpRelay>();
  #packets = 0;

  /** `socket`, `sequencer` and `reporter` are the session's own: relayed packets are sent by one and counted by the others. */
  constructor(socket: MediaSocket, sequencer: RtpSequencer, reporter: RtcpReporter) {
    this.#socket = socket;
    this.#sequencer = sequencer;
    this.#reporter = reporter;
  }

  /** Whether the rule out of this session is in place. */
  get active(): boolean {
    return this.#active;
  }

  /** Packets received that the media I/O relayed by this session's rule, as reported so far. */
  get packets(): number {
    return this.#packets;
  }

  /**
   * Puts the rule relaying `stream` from `peer` to `target`'s far end `destination` in the media
   * I/O, with the header `target`'s sequencer would write. False when `target`'s sequencer is not
   * on this stream or the media I/O cannot relay; the session checked everything else.
   */
  start(target: RtpRelay, peer: MediaAddress, destination: MediaAddress, stream: RelayedStream): boolean {
    const offsets = target.#sequencer.offsetsFor(stream.ssrc);
    if (offsets === null) return false;
    const rule = {
      peer, ssrc: stream.ssrc, payloadType: stream.payloadType, destination, outSsrc: target.#sequencer.ssrc,
      sequenceOffset: offsets.sequence, timestampOffset: offsets.timestamp, outPayloadType: stream.outPayloadType,
    };
    if (!this.#socket.relay(rule, target.#socket)) return false;
    if (this.#out !== null && this.#out.target !== target) this.#out.target.#into.delete(this);
    this.#out = { target, ssrc: stream.ssrc, sequenceOffset: offsets.sequence, timestampOffset: offsets.timestamp };
    this.#active = true;
    target.#into.add(this);
    return true;
  }

  /** Every packet comes through JavaScript again from the next read on. */
  stop(): void {
    if (!this.#active) return;
    this.#active = false;
    this.#socket.relay(null);
    if (this.#out !== null) this.#out.target.#into.delete(this);
  }

  /** Stops the rule out of this session and those into it. */
  stopAll(): void {
    this.stop();
    this.stopInto();
  }

  /** Stops the rules into this session. */
  stopInto(): void {
    for (const from of this.#into) from.stop();
  }

  /** Stops the rules into this session that carry another stream than `ssrc`: sending it moves the sequencer's offsets. */
  stopIntoExcept(ssrc: number): void {
    for (const from of this.#into) if (from.#out?.ssrc !== ssrc) from.stop();
  }

  /** A packet the media I/O relayed by this session's rule, received at `now`: counted here, and as sent at the target. */
  relayed(sequenceNumber: number, timestamp: number, length: number, now: number): void {
    this.#packets++;
    relayedInProcess++;
    const out = this.#out;
    if (out !== null) out.target.#sent((sequenceNumber + out.sequenceOffset) & 0xffff, (timestamp + out.timestampOffset) >>> 0, length, now);
  }

  #sent(sequenceNumber: number, timestamp: number, length: number, now: number): void {
    this.#sequencer.noteRelayed(sequenceNumber, timestamp, now);
    this.#reporter.onRtpSent(length - RTP_HEADER_SIZE, timestamp, now);
  }
}
