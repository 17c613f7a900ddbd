/**
 * @module An inbound call to a routed DID (issue "inbound calls"): the caller's INVITE is answered
 * from our RTP port and joined to the tenant's imported agent in its connection mode. media_bridge:
 * the gateway answers and opens the platform's streaming session on the caller's audio. sip_trunk:
 * the gateway dials the platform's SIP edge first and answers the caller when the agent answers
 * (see sip-trunk-side.ts). Either way the media is anchored here, so hold, recording and transfer
 * work exactly as on outbound calls.
 */
import { createAnswer, isSdpRejection, type LocalCapabilities, type NegotiatedAudio, type RtpSession } from '../media/index.js';
import type { InboundCall } from '../sip/index.js';
import { StreamingAgentSide } from './agent-side.js';
import type { Call } from './call.js';
import { CallFlow } from './call-flow.js';
import type { CarrierProfile } from './carrier-profile.js';
import { ConnectedCall } from './connected-call.js';
import type { EndReason } from './end-reason.js';
import type { CallEngineContext } from './engine-context.js';
import type { InboundRoute } from './ports.js';
import { carrierLegCapabilities, RemoteLeg, wireRemote } from './remote-leg.js';
import { SipTrunkSide } from './sip-trunk-side.js';

export class InboundCallFlow extends CallFlow {
  readonly #ctx: CallEngineContext;
  readonly #invite: InboundCall;
  readonly #carrier: CarrierProfile;
  readonly #route: InboundRoute;
  readonly #rtp: RtpSession;
  #trunk: SipTrunkSide | null = null;

  constructor(ctx: CallEngineContext, call: Call, invite: InboundCall, carrier: CarrierProfile, route: InboundRoute, rtp: RtpSession) {
    super(call);
    this.#ctx = ctx;
    this.#invite = invite;
    this.#carrier = carrier;
    this.#route = route;
    this.#rtp = rtp;
    // RFC 3261 9.2: the caller gave up before the answer (the UA already answered 487).
    invite.events.on('cancel', () => {
      this.#trunk?.cancel();
      this.#fail({ reason: 'canceled', sipStatus: 487, hangupBy: 'caller' });
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

  protected setupSession(): Record<string, unknown> {
    return { local_rtp_port: this.#rtp.localPort, agent: this.#trunk?.describe() ?? null };
  }

  /** Our answer to the caller's offer, with RTP pointed at the caller; null (and 488 sent) when unusable. */
  #answerOffer(): { caps: LocalCapabilities; answer: { sdp: string; negotiated: NegotiatedAudio } } | null {
    const caps = carrierLegCapabilities(this.#ctx, this.#carrier, this.#rtp);
    const answer = createAnswer(this.#invite.offer.toString('utf8'), caps);
    if (isSdpRejection(answer)) {
      // RFC 3264 6: no common codec (or no offer we can read) is a 488.
      this.#reject(488, { reason: 'failed', sipStatus: 488, hangupBy: 'gateway' });
      return null;
    }
    wireRemote(this.#rtp, answer.negotiated);
    return { caps, answer };
  }

  async #answerForStream(): Promise<void> {
    const offered = this.#answerOffer();
    if (!offered) return;
    const { caps, answer } = offered;
    const dialog = this.#invite.accept(Buffer.from(answer.sdp));
    if (!dialog) return this.#fail({ reason: 'canceled', sipStatus: 487, hangupBy: 'caller' });
    this.call.advance('answered');
    const remote = new RemoteLeg(dialog, this.#rtp, answer.negotiated, caps);
    const agent = { kind: 'imported', agentId: this.#route.agentId } as const;
    this.connected = new ConnectedCall(this.#ctx, this.call, remote, this.#carrier,
      (recorder, ended) => new StreamingAgentSide(this.#ctx, this.call, remote, agent, recorder, ended));
    await this.connected.start();
  }

  async #bridgeTrunk(): Promise<void> {
    const offered = this.#answerOffer();
    if (!offered) return;
    const { caps, answer } = offered;
    const trunk = new SipTrunkSide(this.#ctx, this.call, this.#route, this.#rtp, answer.negotiated, {
      // The agent's 18x becomes ours; its early media flows through the bridge already.
      onRinging: (earlyMedia) => {
        this.call.advance('ringing');
        this.#invite.progress(earlyMedia ? 183 : 180, earlyMedia ? Buffer.from(answer.sdp) : undefined);
      },
    });
    this.#trunk = trunk;
    const outcome = await trunk.dial();
    if (this.call.isEnded) return trunk.release('call ended');
    if (outcome.kind === 'failed') return this.#reject(outcome.callerStatus, outcome.reason);
    const dialog = this.#invite.accept(Buffer.from(answer.sdp));
    if (!dialog) {
      trunk.release('caller went away');
      return this.#fail({ reason: 'canceled', sipStatus: 487, hangupBy: 'caller' });
    }
    this.call.advance('answered');
    const remote = new RemoteLeg(dialog, this.#rtp, answer.negotiated, caps);
    this.connected = new ConnectedCall(this.#ctx, this.call, remote, this.#carrier, (recorder, ended) => trunk.connected(remote, recorder, ended));
    await this.connected.start();
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
