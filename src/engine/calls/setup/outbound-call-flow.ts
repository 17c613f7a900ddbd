/**
 * @module An outbound call (docs/API.md "Calls", POST /v1/calls): the INVITE through the carrier
 * (RFC 3263 targets with failover, 3xx redirects, digest, the carrier's number format), `ringing` on 18x,
 * `active` on 2xx and then the agent; every failure ends the attempt with its end reason and
 * SIP status. Before the answer a hang-up is a CANCEL (RFC 3261 9.1), after it a BYE. The agent is
 * a WebSocket, an imported media_bridge agent's streaming session, or an imported sip_trunk
 * agent reached by a second SIP leg once the callee answered (a B2BUA, as inbound calls are).
 */
import { createOffer, isSdpRejection, processAnswer, type RtpSession } from '../../media/index.js';
import { resolveNextHop, type FailoverOutcome, type OutboundCall } from '../../sip/index.js';
import { sendBye } from '../connected/bye.js';
import type { Call } from '../call.js';
import { CallFlow } from './call-flow.js';
import { inviteThroughCarrier } from './carrier-invite.js';
import { formatNumber, requestUriFor, type CarrierProfile } from './carrier-profile.js';
import { StreamingAgentSide, type AgentSideDeps } from '../connected/agent-side.js';
import { ConnectedCall, type ConnectedCallDeps } from '../connected/connected-call.js';
import { EarlyOffers } from './early-offers.js';
import { endReasonForFailure, type EndReason } from '../ending/end-reason.js';
import type { Clock } from '../../../common/clock.js';
import type { SipDialling } from './sip-dialling.js';
import { carrierLegCapabilities, RemoteLeg, wireRemote } from '../connected/remote-leg.js';
import type { SetupSessionSnapshot } from '../session-snapshot.js';
import type { AgentTarget } from '../ports.js';
import { SipTrunkSide, type SipTrunkDeps } from '../connected/sip-trunk-side.js';
import type { NegotiatedAudio } from '../../media/index.js';
import type { SessionDialog } from '../../sip/index.js';

/** The agent of an outbound call: a WebSocket, or an imported agent in its connection mode. */
export type OutboundAgent = { kind: 'websocket'; url: string } | { kind: 'imported'; agentId: string; mode: 'sip_trunk' | 'media_bridge' };

/** What an outbound call uses: the INVITE to the carrier, our media address, and what the answered call needs. */
export interface OutboundFlowDeps {
  clock: Clock;
  dialling: SipDialling;
  /** Address advertised in SDP (c=) for our media. */
  mediaAddress: string;
  connected: ConnectedCallDeps;
  agent: AgentSideDeps;
  /** The leg to a sip_trunk agent's edge. */
  trunk: SipTrunkDeps;
}

export class OutboundCallFlow extends CallFlow {
  readonly #deps: OutboundFlowDeps;
  readonly #carrier: CarrierProfile;
  readonly #rtp: RtpSession;
  readonly #agent: OutboundAgent;
  /** The tenant's X- headers for the carrier's INVITE (docs/API.md "SIP headers carried through"). */
  readonly #sipHeaders: [string, string][];
  #attempt: OutboundCall | null = null;
  /** A sip_trunk agent's leg while it is dialled, after the callee answered. */
  #trunk: SipTrunkSide | null = null;
  /** Why we stopped the attempt ourselves, if we did: the API hung up, or nobody answered in time. */
  #stoppedBy: 'api' | 'ring_timeout' | 'shutdown' | null = null;

  constructor(deps: OutboundFlowDeps, call: Call, carrier: CarrierProfile, rtp: RtpSession, agent: OutboundAgent, sipHeaders: Record<string, string> = {}) {
    super(call);
    this.#deps = deps;
    this.#carrier = carrier;
    this.#rtp = rtp;
    this.#agent = agent;
    this.#sipHeaders = Object.entries(sipHeaders);
  }

  protected proceed(): Promise<void> {
    return this.#place();
  }

  protected stopBeforeAnswer(reason: EndReason): void {
    this.#stoppedBy ??= reason.hangupBy === 'api' ? 'api' : 'shutdown';
    // The INVITE's outcome ends the call (487 after our CANCEL, or a BYE if the answer crossed it).
    this.#attempt?.cancel();
    // Answered, the agent's leg still dialling: cancelling it ends the call (#bridgeTrunk).
    this.#trunk?.cancel();
  }

  protected failBeforeAnswer(reason: EndReason): void {
    this.#fail(reason);
  }

  protected setupSession(): Omit<SetupSessionSnapshot, 'phase'> {
    return { local_rtp_port: this.#rtp.localPort, ...(this.#trunk ? { agent: this.#trunk.describe() } : {}) };
  }

  async #place(): Promise<void> {
    const uri = this.#carrier.outboundUri;
    const targets = uri ? await resolveNextHop(this.#deps.dialling.locator, uri).catch((err: unknown) => {
      this.call.log.warn({ err, uri }, 'the carrier target does not resolve');
      return [];
    }) : [];
    if (!uri || targets.length === 0) {
      return this.#fail({ reason: 'carrier_unreachable', sipStatus: null, hangupBy: 'gateway' });
    }
    if (this.#stoppedBy) return this.#fail(this.#stoppedReason(487));
    const caps = carrierLegCapabilities(this.#deps.mediaAddress, this.#carrier, this.#rtp);
    const early = new EarlyOffers(caps, (audio) => wireRemote(this.#rtp, audio));
    const record = this.call.snapshot();
    const ring = this.#deps.clock.setTimeout(() => {
      this.#stoppedBy ??= 'ring_timeout';
      this.#attempt?.cancel();
    }, this.#deps.dialling.ringTimeoutMs);
    let outcome: FailoverOutcome;
    try {
      outcome = await inviteThroughCarrier(this.#deps.dialling.ua, {
        target: requestUriFor(uri, formatNumber(record.to_number, this.#carrier)),
        from: `sip:${formatNumber(record.from_number, this.#carrier)}@${this.#deps.dialling.sipHost}`,
        sdp: Buffer.from(createOffer(caps)),
        credentials: this.#carrier.credentials,
        headers: this.#sipHeaders,
      }, targets, { onAttempt: (attempt) => this.#watch(attempt, early), stopped: () => this.#stoppedBy !== null, log: this.call.log });
    } finally {
      ring.cancel();
      this.#attempt = null;
    }
    if (outcome.kind === 'failed') return this.#fail(this.#failureReason(outcome.status, outcome.response !== undefined));
    if (this.#stoppedBy) {
      // The answer crossed our CANCEL (RFC 3261 9.1): the dialog exists, so it ends with BYE.
      await sendBye(outcome.session, this.call.log, 'answer crossed our CANCEL');
      return this.#fail(this.#stoppedReason(487));
    }
    const answer = early.agreedIn(outcome.session) ?? processAnswer(outcome.session.remoteAnswer?.toString('utf8') ?? '', caps);
    if (isSdpRejection(answer)) {
      // RFC 3261 13.2.1 / RFC 3264 6: an unusable answer leaves only BYE.
      await sendBye(outcome.session, this.call.log, 'unusable SDP answer');
      return this.#fail({ reason: 'failed', sipStatus: 488, hangupBy: 'gateway' });
    }
    wireRemote(this.#rtp, answer);
    this.call.advance('answered');
    this.call.snapshotDialog('carrier', outcome.session);
    const remote = new RemoteLeg(outcome.session, this.#rtp, answer, caps);
    if (this.#agent.kind === 'imported' && this.#agent.mode === 'sip_trunk') return this.#bridgeTrunk(this.#agent.agentId, remote, outcome.session, answer);
    const agent: AgentTarget = this.#agent.kind === 'websocket' ? { kind: 'websocket', url: this.#agent.url } : { kind: 'imported', agentId: this.#agent.agentId };
    const connected = new ConnectedCall(this.#deps.connected, this.call, remote, this.#carrier,
      (recorder, ended, asks) => new StreamingAgentSide(this.#deps.agent, this.call, remote, agent, recorder, ended, asks, this.#carrier.dtmf));
    this.connected = connected;
    await connected.start();
  }

  /**
   * The callee answered: the sip_trunk agent's edge is dialled (its platform's call registered
   * first where it needs one) and bridged to the callee, who hears nothing until it answers. A
   * failed agent leg, the callee's BYE or a hang-up meanwhile ends both legs.
   */
  async #bridgeTrunk(agentId: string, remote: RemoteLeg, session: SessionDialog, answer: NegotiatedAudio): Promise<void> {
    const record = this.call.snapshot();
    const caller = { number: record.from_number, private: false, asserted: null, diversion: [], verification: { verstat: null, identityHeader: false } };
    const trunk = new SipTrunkSide(this.#deps.trunk, this.call, { tenantId: record.tenant_id, agentId, connectionMode: 'sip_trunk' }, this.#rtp, answer, caller, { onRinging: () => undefined });
    this.#trunk = trunk;
    let calleeLeft = false;
    const onBye = (): void => {
      calleeLeft = true;
      trunk.cancel();
    };
    const stopWatching = session.events.on('bye', onBye);
    const outcome = await trunk.dial();
    stopWatching();
    this.#trunk = null;
    if (calleeLeft) {
      trunk.release('callee hung up');
      return this.#fail({ reason: 'completed', sipStatus: null, hangupBy: 'callee' });
    }
    if (this.#stoppedBy || this.call.isEnded || outcome.kind === 'failed') {
      trunk.release(outcome.kind === 'failed' ? 'agent leg failed' : 'hung up while the agent was dialled');
      remote.close();
      await sendBye(session, this.call.log, 'the agent leg did not connect');
      if (this.#stoppedBy === 'api') return this.#fail({ reason: 'completed', sipStatus: null, hangupBy: 'api' });
      if (this.#stoppedBy) return this.#fail({ reason: 'gateway_shutdown', sipStatus: null, hangupBy: 'gateway' });
      return this.#fail(outcome.kind === 'failed' ? outcome.reason : { reason: 'failed', sipStatus: null, hangupBy: 'gateway' });
    }
    const connected = new ConnectedCall(this.#deps.connected, this.call, remote, this.#carrier, (recorder, ended, asks) => trunk.connected(remote, recorder, ended, asks), trunk);
    this.connected = connected;
    await connected.start();
  }

  #watch(attempt: OutboundCall, early: EarlyOffers): void {
    this.#attempt = attempt;
    this.call.traceSip(attempt.callId, 'carrier');
    early.watch(attempt);
    if (this.#stoppedBy) attempt.cancel();
    attempt.events.on('progress', (response) => {
      // 100 Trying is hop-by-hop; 18x means the far end is alerting (RFC 3261 21.1).
      if (response.status > 100) this.call.advance('ringing');
    });
  }

  #failureReason(status: number, answered: boolean): EndReason {
    if (this.#stoppedBy) return this.#stoppedReason(status);
    // No response at all: the transaction timed out or the transport failed (RFC 3261 8.1.3.1).
    if (!answered) return { reason: 'carrier_unreachable', sipStatus: status, hangupBy: 'gateway' };
    return endReasonForFailure(status);
  }

  #stoppedReason(status: number): EndReason {
    switch (this.#stoppedBy) {
      case 'ring_timeout': return { reason: 'no_answer', sipStatus: status, hangupBy: 'gateway' };
      case 'shutdown': return { reason: 'gateway_shutdown', sipStatus: status, hangupBy: 'gateway' };
      default: return { reason: 'canceled', sipStatus: status, hangupBy: 'api' };
    }
  }

  #fail(reason: EndReason): void {
    this.#rtp.close();
    this.call.end(reason);
  }
}
