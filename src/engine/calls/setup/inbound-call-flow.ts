/**
 * @module An inbound call to a routed DID (docs/DECISIONS.md "Calls"): the caller's INVITE is answered
 * from our RTP port and joined to the tenant's imported agent in its connection mode. media_bridge:
 * the gateway answers and opens the platform's streaming session on the caller's audio. sip_trunk:
 * the gateway dials the platform's SIP edge first and answers the caller when the agent answers
 * (see sip-trunk-side.ts). Either way the media is anchored here, so hold, recording and transfer
 * work exactly as on outbound calls.
 */
import {
  createAnswer, createOffer, isSdpRejection, type CodecDescription, type LocalCapabilities, type NegotiatedAudio, type RtpSession,
} from '../../media/index.js';
import type { InboundCall, SessionDialog } from '../../sip/index.js';
import { StreamingAgentSide, type AgentSideDeps } from '../connected/agent-side.js';
import { sendBye } from '../connected/bye.js';
import { callerIdentity } from './caller-identity.js';
import { identityTowardEdge } from './carried-headers.js';
import type { Call } from '../call.js';
import { CallFlow } from './call-flow.js';
import { carrierCodecs, preferCodec, type CarrierProfile } from './carrier-profile.js';
import { ConnectedCall, type ConnectedCallDeps } from '../connected/connected-call.js';
import type { EndReason } from '../ending/end-reason.js';
import { answerFromAck } from './late-offer.js';
import type { InboundRoute } from '../ports.js';
import { carrierLegCapabilities, RemoteLeg, wireRemote } from '../connected/remote-leg.js';
import { SipTrunkSide, type SipTrunkDeps } from '../connected/sip-trunk-side.js';
import type { SetupSessionSnapshot } from '../session-snapshot.js';

/** The caller's leg once answered: its session, what we offered or answered, and the audio agreed. */
interface AnsweredCaller {
  dialog: SessionDialog;
  caps: LocalCapabilities;
  audio: NegotiatedAudio;
}

/** What an inbound call uses: our media address, and the agent side its route asks for (streaming or sip_trunk). */
export interface InboundFlowDeps {
  /** Address advertised in SDP (c=) for our media. */
  mediaAddress: string;
  connected: ConnectedCallDeps;
  agent: AgentSideDeps;
  trunk: SipTrunkDeps;
}

export class InboundCallFlow extends CallFlow {
  readonly #deps: InboundFlowDeps;
  readonly #invite: InboundCall;
  readonly #carrier: CarrierProfile;
  readonly #route: InboundRoute;
  readonly #rtp: RtpSession;
  #trunk: SipTrunkSide | null = null;
  /**
   * The caller's leg from our 183 with SDP on: its early dialog answers UPDATE offers (RFC 3311
   * 5.1; docs/DECISIONS.md "Offers in early dialogs") and becomes the confirmed leg.
   */
  #earlyLeg: RemoteLeg | null = null;

  constructor(deps: InboundFlowDeps, call: Call, invite: InboundCall, carrier: CarrierProfile, route: InboundRoute, rtp: RtpSession) {
    super(call);
    this.#deps = deps;
    this.#invite = invite;
    this.#carrier = carrier;
    this.#route = route;
    this.#rtp = rtp;
    // RFC 3261 9.2: the caller gave up before the answer (the UA already answered 487).
    invite.events.on('cancel', () => {
      this.#trunk?.cancel();
      this.#fail({ reason: 'canceled', sipStatus: 487, hangupBy: 'caller' });
    });
    // RFC 3262 3: the caller required reliable provisionals and never acknowledged one (the UA refused the INVITE).
    invite.events.on('failed', (status) => {
      this.#trunk?.cancel();
      this.#fail({ reason: 'failed', sipStatus: status, hangupBy: 'gateway' });
    });
  }

  /** Answers (media_bridge) or bridges (sip_trunk). */
  protected proceed(): Promise<void> {
    return this.#route.connectionMode === 'sip_trunk' ? this.#bridgeTrunk() : this.#answerForStream();
  }

  /** Before the answer a hang-up refuses the caller's INVITE (and cancels the agent leg). */
  protected stopBeforeAnswer(reason: EndReason): void {
    this.#trunk?.cancel();
    this.#reject(reason.reason === 'gateway_shutdown' ? 503 : 480, { ...reason, reason: reason.reason === 'completed' ? 'canceled' : reason.reason });
  }

  protected failBeforeAnswer(reason: EndReason): void {
    this.#reject(500, reason);
  }

  protected setupSession(): Omit<SetupSessionSnapshot, 'phase'> {
    return { local_rtp_port: this.#rtp.localPort, agent: this.#trunk?.describe() ?? null };
  }

  /** Our answer to the caller's offer, with RTP pointed at the caller; null (and 488 sent) when unusable. */
  #answerOffer(): { caps: LocalCapabilities; answer: { sdp: string; negotiated: NegotiatedAudio } } | null {
    const caps = carrierLegCapabilities(this.#deps.mediaAddress, this.#carrier, this.#rtp);
    const answer = createAnswer(this.#invite.offer.toString('utf8'), caps);
    if (isSdpRejection(answer)) {
      // RFC 3264 6: no common codec (or no offer we can read) is a 488.
      this.call.log.info({ sdp: answer.error, detail: answer.detail }, 'offer refused');
      this.#reject(488, { reason: 'failed', sipStatus: 488, hangupBy: 'gateway' });
      return null;
    }
    wireRemote(this.#rtp, answer.negotiated);
    return { caps, answer };
  }

  /** Whether the INVITE came without an offer: ours goes in the 200 and the answer in the ACK. */
  get #lateOffer(): boolean {
    return this.#invite.offer.length === 0;
  }

  async #answerForStream(): Promise<void> {
    let caller: AnsweredCaller | null;
    if (this.#lateOffer) {
      caller = await this.#offerToCaller(carrierCodecs(this.#carrier));
    } else {
      const offered = this.#answerOffer();
      if (!offered) return;
      const dialog = this.#invite.accept(Buffer.from(offered.answer.sdp));
      if (!dialog) return this.#fail({ reason: 'canceled', sipStatus: 487, hangupBy: 'caller' });
      caller = { dialog, caps: offered.caps, audio: offered.answer.negotiated };
    }
    if (!caller) return;
    this.call.advance('answered');
    this.call.snapshotDialog('carrier', caller.dialog);
    const remote = new RemoteLeg(caller.dialog, this.#rtp, caller.audio, caller.caps);
    const agent = { kind: 'imported', agentId: this.#route.agentId } as const;
    this.connected = new ConnectedCall(this.#deps.connected, this.call, remote, this.#carrier,
      (recorder, ended, asks) => new StreamingAgentSide(this.#deps.agent, this.call, remote, agent, recorder, ended, asks, this.#carrier.dtmf));
    await this.connected.start();
  }

  async #bridgeTrunk(): Promise<void> {
    // With a late offer the caller's codec is known only from the ACK, after the agent answered.
    const offered = this.#lateOffer ? null : this.#answerOffer();
    if (!this.#lateOffer && !offered) return;
    const identity = identityTowardEdge(callerIdentity(this.#invite.request, this.#carrier), this.#carrier.carryHeaders);
    const trunk = new SipTrunkSide(this.#deps.trunk, this.call, this.#route, this.#rtp, offered?.answer.negotiated ?? null, identity, {
      // The agent's 18x becomes ours; its early media flows through the bridge already. A late
      // offer has no answer to put in a 183 (an offer may not go in an unreliable 18x): 180 only.
      onRinging: (earlyMedia) => {
        this.call.advance('ringing');
        if (!earlyMedia || !offered) return void this.#invite.progress(180);
        const early = this.#invite.progress(183, Buffer.from(offered.answer.sdp));
        if (early && !this.#earlyLeg) this.#earlyLeg = new RemoteLeg(early, this.#rtp, offered.answer.negotiated, offered.caps);
      },
    });
    this.#trunk = trunk;
    const outcome = await trunk.dial();
    if (this.call.isEnded) return trunk.release('call ended');
    if (outcome.kind === 'failed') {
      // The agent's leg may hold an RTP session (and a dialog to BYE after an unusable answer).
      trunk.release('agent leg failed');
      return this.#reject(outcome.callerStatus, outcome.reason);
    }
    let caller: AnsweredCaller | null;
    if (offered) {
      // After an UPDATE in the early dialog the 2xx repeats our latest answer, not the first one.
      const dialog = this.#invite.accept(this.#earlyLeg?.dialog.localSdp ?? Buffer.from(offered.answer.sdp));
      if (!dialog) {
        trunk.release('caller went away');
        return this.#fail({ reason: 'canceled', sipStatus: 487, hangupBy: 'caller' });
      }
      caller = { dialog, caps: offered.caps, audio: this.#earlyLeg?.audio ?? offered.answer.negotiated };
    } else {
      // The agent's codec first, so the bridge relays without transcoding when the caller takes it.
      const agentCodec = trunk.agentCodec;
      const codecs = carrierCodecs(this.#carrier);
      caller = await this.#offerToCaller(agentCodec && codecs.some((c) => c.encoding === agentCodec.encoding) ? preferCodec(agentCodec, codecs) : codecs);
      if (!caller) return trunk.release('caller leg did not complete its offer/answer');
      trunk.bridgeCaller(caller.audio);
    }
    this.call.advance('answered');
    this.call.snapshotDialog('carrier', caller.dialog);
    const remote = this.#earlyLeg?.dialog === caller.dialog ? this.#earlyLeg : new RemoteLeg(caller.dialog, this.#rtp, caller.audio, caller.caps);
    this.connected = new ConnectedCall(this.#deps.connected, this.call, remote, this.#carrier, (recorder, ended, asks) => trunk.connected(remote, recorder, ended, asks, this.#carrier.dtmf), trunk);
    await this.connected.start();
  }

  /**
   * RFC 3261 13.2.1 and RFC 3264 4, the INVITE carried no offer: ours goes in the 200 and the
   * caller's answer comes in the ACK. The call counts as answered only once that answer is usable,
   * since no media can flow before. An ACK without a usable answer gets a BYE (the session cannot
   * carry audio); no ACK at all ends the session with BYE after 64*T1 (13.3.1.4). Either way the
   * call ends `failed`, and null is returned.
   */
  async #offerToCaller(codecs: CodecDescription[]): Promise<AnsweredCaller | null> {
    const caps = carrierLegCapabilities(this.#deps.mediaAddress, this.#carrier, this.#rtp, codecs);
    const dialog = this.#invite.accept(Buffer.from(createOffer(caps)));
    if (!dialog) {
      this.#fail({ reason: 'canceled', sipStatus: 487, hangupBy: 'caller' });
      return null;
    }
    const answer = await answerFromAck(dialog, caps);
    if (this.call.isEnded) {
      // Hung up (API, shutdown) while the ACK was awaited; RFC 3261 15 lets the BYE go only now.
      await sendBye(dialog, this.call.log, 'hung up while the ACK was awaited');
      return null;
    }
    if (answer.kind === 'answer') {
      wireRemote(this.#rtp, answer.audio);
      return { dialog, caps, audio: answer.audio };
    }
    if (answer.kind === 'unusable') {
      this.call.log.warn({ detail: answer.detail }, 'late offer: the ACK brought no usable answer, ending with BYE');
      await sendBye(dialog, this.call.log, 'late offer without a usable answer');
      this.#fail({ reason: 'failed', sipStatus: null, hangupBy: 'gateway' });
    } else {
      this.call.log.warn({ session_end: answer.reason }, 'late offer: the session ended before the ACK brought an answer');
      this.#fail(answer.reason === 'remote-bye'
        ? { reason: 'completed', sipStatus: null, hangupBy: 'caller' }
        : { reason: 'failed', sipStatus: null, hangupBy: 'gateway' });
    }
    return null;
  }

  #reject(status: number, reason: EndReason): void {
    this.#invite.reject(status);
    this.#fail(reason);
  }

  #fail(reason: EndReason): void {
    this.#rtp.close();
    this.call.end(reason);
  }
}
