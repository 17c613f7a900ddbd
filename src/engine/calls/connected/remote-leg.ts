/**
 * @module The leg to the remote party (the carrier side): its SIP session, its RTP session and the
 * negotiated audio. Answers the far end's re-offers (hold, a new address after the carrier moved
 * the media, a session refresh, another codec) from the same port, per RFC 3264 section 8.
 */
import {
  canBridge, createAnswer, createOffer, isSdpRejection, isUnspecifiedAddress, sendsMedia, SrtpKeyring,
  type CodecDescription, type LocalCapabilities, type NegotiatedAudio, type RtpSession,
} from '../../media/index.js';
import type { SessionDialog } from '../../sip/index.js';
import { carrierCodecs, type CarrierProfile } from '../setup/carrier-profile.js';
import { newSdpSessionId } from '../setup/leg-media.js';
import { answerFromAck } from '../setup/late-offer.js';
import type { RemoteLegSnapshot } from '../session-snapshot.js';
import { legQuality, type LegQuality, type QualityLegName } from '../quality/call-quality.js';

/** What we offer or answer on a carrier leg. */
export function legCapabilities(address: string, rtp: RtpSession, codecs: readonly CodecDescription[], sessionId: number): LocalCapabilities {
  return { address, port: rtp.localPort, codecs, sessionId, sessionVersion: 1 };
}

/**
 * What we offer or answer toward a carrier: its media address (the sandbox's is loopback), its
 * codecs, and its media encryption with keys of the leg's own. `mediaAddress` is ours
 * (the leg media's `address`), used when the carrier names none.
 */
export function carrierLegCapabilities(mediaAddress: string, carrier: CarrierProfile, rtp: RtpSession, codecs = carrierCodecs(carrier)): LocalCapabilities {
  const caps = legCapabilities(carrier.mediaAddress ?? mediaAddress, rtp, codecs, newSdpSessionId());
  return carrier.mediaEncryption === 'disabled' ? caps : { ...caps, srtp: { encryption: carrier.mediaEncryption, keyring: new SrtpKeyring() } };
}

/**
 * Points the RTP session at the far end of a negotiation (RTCP per RFC 3605 or rtcp-mux), keys its
 * SRTP, if any, and sends only what our direction allows: RTP when it is sendrecv or sendonly
 * (RFC 3264 §5.1), RTCP unless the far end is at the RFC 2543 hold address (RFC 3264 §8.4).
 */
export function wireRemote(rtp: RtpSession, audio: NegotiatedAudio): void {
  rtp.setRemote(audio.remote.rtp, { rtcp: audio.remote.rtcp, rtcpMux: audio.rtcpMux });
  rtp.setSrtp(audio.srtp ? { send: audio.srtp.send, receive: audio.srtp.receive } : null);
  rtp.setSending(sendsMedia(audio.direction), !isUnspecifiedAddress(audio.remote.rtp.address));
}

/** What the owner of a leg hears about a re-offer it accepted: the audio before and after. */
export type AudioChange = (audio: NegotiatedAudio, previous: NegotiatedAudio) => void;

export class RemoteLeg {
  readonly dialog: SessionDialog;
  readonly rtp: RtpSession;
  readonly #caps: LocalCapabilities;
  #audio: NegotiatedAudio;
  /** Re-offers answered, for the session view. */
  #reoffers = 0;
  /** Told after every accepted re-offer (hold, resume, a new codec); the owner re-wires what depends on it. */
  onAudioChange: AudioChange | undefined;

  constructor(dialog: SessionDialog, rtp: RtpSession, audio: NegotiatedAudio, caps: LocalCapabilities) {
    this.dialog = dialog;
    this.rtp = rtp;
    this.#audio = audio;
    this.#caps = { ...caps };
    dialog.onOffer = (offer) => this.#answerReoffer(offer);
  }

  get audio(): NegotiatedAudio {
    return this.#audio;
  }

  /**
   * A re-INVITE or UPDATE with an offer, answered from the same port. The codec in use is kept
   * when offered (RFC 3264 §8.3.2 lets the answerer narrow), so nothing downstream changes. An
   * offer without it may move the call to another codec we can convert to from the other side's
   * (G.711 µ-law and A-law, as the bridge and the agent leg do): the answer picks the offerer's
   * first such codec (RFC 3264 §6.1) and the owner re-wires the media. Anything else is refused
   * with 488 (undefined), and the session goes on as it was.
   */
  #answerReoffer(offer: Buffer): Buffer | undefined {
    const current = this.#audio.codec;
    const events = this.#audio.telephoneEvent ? [this.#audio.telephoneEvent] : [];
    this.#caps.sessionVersion += 1;
    const caps = { ...this.#caps, codecs: [current, ...events] };
    // A call that is encrypted stays encrypted: a re-offer may change keys, not drop them.
    if (this.#audio.srtp && caps.srtp) caps.srtp = { ...caps.srtp, encryption: 'required' };
    if (offer.length === 0) return this.#offerInAnswer(caps);
    const sdp = offer.toString('utf8');
    let result: ReturnType<typeof createAnswer> = createAnswer(sdp, caps);
    if (isSdpRejection(result) && result.error === 'no-common-codec') {
      result = createAnswer(sdp, { ...caps, codecs: convertibleCodecs(this.#caps.codecs, current) });
    }
    if (isSdpRejection(result)) return undefined;
    this.#accept(result.negotiated);
    return Buffer.from(result.sdp);
  }

  #accept(audio: NegotiatedAudio): void {
    const previous = this.#audio;
    this.#audio = audio;
    wireRemote(this.rtp, audio);
    this.#reoffers += 1;
    this.onAudioChange?.(audio, previous);
  }

  /**
   * RFC 3261 14.2: a re-INVITE without a body asks for our offer (a carrier's session refresh, or
   * a third party re-connecting the call). We offer what runs now, from the same port; the answer
   * in the ACK re-points the RTP. An ACK without a usable answer leaves the media as it was.
   */
  #offerInAnswer(caps: LocalCapabilities): Buffer {
    void answerFromAck(this.dialog, caps).then((outcome) => {
      if (outcome.kind === 'answer') this.#accept(outcome.audio);
    });
    return Buffer.from(createOffer(caps));
  }

  describe(): RemoteLegSnapshot {
    const stats = this.rtp.stats();
    return {
      codec: this.#audio.codec.encoding,
      srtp: stats.srtpSuite,
      packets_unauthenticated: stats.packetsUnauthenticated,
      rtcp_unauthenticated: stats.rtcpUnauthenticated,
      local_rtp_port: stats.localPort,
      remote_rtp: stats.remote ? `${stats.remote.address}:${stats.remote.port}` : null,
      packets_sent: stats.packetsSent,
      packets_received: stats.packetsReceived,
      packets_lost: stats.reception.packetsLost,
      jitter_ms: stats.reception.jitterMs,
      direction: this.#audio.direction,
      reoffers: this.#reoffers,
    };
  }

  /** The leg's figures for the CDR (docs/API.md "Call quality"): read before {@link close}. */
  quality(leg: QualityLegName): LegQuality {
    return legQuality(leg, this.#audio.codec.encoding, this.rtp.stats());
  }

  close(): void {
    this.dialog.onOffer = undefined;
    this.onAudioChange = undefined;
    this.rtp.close();
  }
}

/**
 * The leg's own codecs (the carrier's list, in its order) that media can convert to and from
 * `current`, telephone-event included: what a re-offer without the codec in use may move to.
 */
function convertibleCodecs(codecs: readonly CodecDescription[], current: CodecDescription): CodecDescription[] {
  if (current.encoding === 'telephone-event') return [];
  const encoding = current.encoding;
  return codecs.filter((c) => c.encoding === 'telephone-event' || canBridge(c.encoding, encoding));
}

/** Same codec and payload types both ways: nothing in the media needs re-wiring. */
export function sameMediaFormat(a: NegotiatedAudio, b: NegotiatedAudio): boolean {
  return a.codec.encoding === b.codec.encoding && a.codec.payloadType === b.codec.payloadType && a.receivePayloadType === b.receivePayloadType
    && (a.telephoneEvent?.payloadType ?? null) === (b.telephoneEvent?.payloadType ?? null)
    && a.receiveTelephoneEventPayloadType === b.receiveTelephoneEventPayloadType;
}
