/**
 * @module The leg to the remote party (the carrier side): its SIP session, its RTP session and the
 * negotiated audio. Answers the far end's re-offers (hold, a new address after the carrier moved
 * the media, a session refresh) with the same port and codec, per RFC 3264 section 8.
 */
import {
  createAnswer, createOffer, isSdpRejection, SrtpKeyring, type CodecDescription, type LocalCapabilities, type NegotiatedAudio, type RtpSession,
} from '../media/index.js';
import type { SessionDialog } from '../sip/index.js';
import { carrierCodecs, type CarrierProfile } from './carrier-profile.js';
import { newSdpSessionId, type CallEngineContext } from './engine-context.js';
import { answerFromAck } from './late-offer.js';

/** What we offer or answer on a carrier leg. */
export function legCapabilities(address: string, rtp: RtpSession, codecs: readonly CodecDescription[], sessionId: number): LocalCapabilities {
  return { address, port: rtp.localPort, codecs, sessionId, sessionVersion: 1 };
}

/**
 * What we offer or answer toward a carrier: its media address (the sandbox's is loopback), its
 * codecs, and its media encryption with keys of the leg's own.
 */
export function carrierLegCapabilities(ctx: Pick<CallEngineContext, 'mediaAddress'>, carrier: CarrierProfile, rtp: RtpSession, codecs = carrierCodecs(carrier)): LocalCapabilities {
  const caps = legCapabilities(carrier.mediaAddress ?? ctx.mediaAddress, rtp, codecs, newSdpSessionId());
  return carrier.mediaEncryption === 'disabled' ? caps : { ...caps, srtp: { encryption: carrier.mediaEncryption, keyring: new SrtpKeyring() } };
}

/** Points the RTP session at the far end of a negotiation (RTCP per RFC 3605 or rtcp-mux) and keys its SRTP, if any. */
export function wireRemote(rtp: RtpSession, audio: NegotiatedAudio): void {
  rtp.setRemote(audio.remote.rtp, { rtcp: audio.remote.rtcp, rtcpMux: audio.rtcpMux });
  rtp.setSrtp(audio.srtp ? { send: audio.srtp.send, receive: audio.srtp.receive } : null);
}

export class RemoteLeg {
  readonly dialog: SessionDialog;
  readonly rtp: RtpSession;
  readonly #caps: LocalCapabilities;
  #audio: NegotiatedAudio;
  /** Re-offers answered, for the session view. */
  #reoffers = 0;

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
   * A re-INVITE or UPDATE with an offer: answered from the same port, restricted to the codec in
   * use so the bridge and the agent leg keep working (RFC 3264 8.3.2 lets the answerer narrow).
   * An offer without that codec is refused with 488 (undefined), and the session goes on as it was.
   */
  #answerReoffer(offer: Buffer): Buffer | undefined {
    const codecs = [this.#audio.codec, ...(this.#audio.telephoneEvent ? [this.#audio.telephoneEvent] : [])];
    this.#caps.sessionVersion += 1;
    const caps = { ...this.#caps, codecs };
    // A call that is encrypted stays encrypted: a re-offer may change keys, not drop them.
    if (this.#audio.srtp && caps.srtp) caps.srtp = { ...caps.srtp, encryption: 'required' };
    if (offer.length === 0) return this.#offerInAnswer(caps);
    const result = createAnswer(offer.toString('utf8'), caps);
    if (isSdpRejection(result)) return undefined;
    this.#audio = result.negotiated;
    wireRemote(this.rtp, result.negotiated);
    this.#reoffers += 1;
    return Buffer.from(result.sdp);
  }

  /**
   * RFC 3261 14.2: a re-INVITE without a body asks for our offer (a carrier's session refresh, or
   * a third party re-connecting the call). We offer what runs now, from the same port; the answer
   * in the ACK re-points the RTP. An ACK without a usable answer leaves the media as it was.
   */
  #offerInAnswer(caps: LocalCapabilities): Buffer {
    void answerFromAck(this.dialog, caps).then((outcome) => {
      if (outcome.kind !== 'answer') return;
      this.#audio = outcome.audio;
      wireRemote(this.rtp, outcome.audio);
      this.#reoffers += 1;
    });
    return Buffer.from(createOffer(caps));
  }

  describe(): Record<string, unknown> {
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
      reoffers: this.#reoffers,
    };
  }

  close(): void {
    this.dialog.onOffer = undefined;
    this.rtp.close();
  }
}
