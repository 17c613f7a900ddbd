/**
 * @module The agent side of a sip_trunk call: a second SIP leg from the gateway to the platform's
 * SIP edge (a B2BUA, RFC 7092), with its own RTP port bridged to the caller's. Media stays anchored
 * here, so hold, recording and transfer work as on any call. The caller is answered only when the
 * agent answers; the agent's 18x and early media reach the caller before that.
 */
import {
  bridgeLegOf, CODECS, createOffer, isSdpRejection, MediaBridge, processAnswer, SrtpKeyring,
  type AudioSource, type CodecDescription, type LocalCapabilities, type NegotiatedAudio, type RtpSession,
} from '../../media/index.js';
import { inviteWithFailover, resolveNextHop, type OutboundCall, type SessionDialog } from '../../sip/index.js';
import type { AgentEnded, AgentSide } from './agent-side.js';
import type { Call } from '../call.js';
import { edgeHeaders } from '../setup/carried-headers.js';
import { sendBye } from './bye.js';
import { towardAgentEdge, type CallerIdentity } from '../setup/caller-identity.js';
import { endReasonForFailure, type EndReason } from '../ending/end-reason.js';
import { newSdpSessionId, type LegMedia } from '../setup/leg-media.js';
import type { SipDialling } from '../setup/sip-dialling.js';
import type { Clock } from '../../../common/clock.js';
import type { OutboundAddressPolicy } from '../../../common/outbound-policy.js';
import type { AgentConnectObserver, InboundRoute, SipTrunkResolver } from '../ports.js';
import type { RecordingPort } from './recording-port.js';
import { preferCodec } from '../setup/carrier-profile.js';
import { EarlyOffers } from '../setup/early-offers.js';
import { legCapabilities, RemoteLeg, wireRemote } from './remote-leg.js';
import type { SipTrunkAgentSnapshot } from '../session-snapshot.js';
import { legQuality, type CallQuality } from '../quality/call-quality.js';
import type { AgentAsks } from './agent-transfer.js';
import { TrunkDigits } from './trunk-digits.js';
import { TrunkHold } from './trunk-hold.js';
import { AgentReferReports } from './agent-refer-reports.js';
import type { TransferPolicy } from './transfer-policy.js';
import { callerStatusFor, type TrunkDialOutcome, type TrunkHooks } from './sip-trunk-outcome.js';

export type { TrunkDialOutcome, TrunkHooks } from './sip-trunk-outcome.js';

/** What a sip_trunk agent edge uses: its target's resolution and address check, the leg's SIP and media, hold music. */
export interface SipTrunkDeps {
  clock: Clock;
  dialling: SipDialling;
  media: LegMedia;
  holdMusic(): AudioSource | null;
  resolveSipTrunk: SipTrunkResolver;
  /** The outbound-address policy of sip_trunk targets (docs/SECURITY.md, "Outbound addresses"). */
  sipTargets: OutboundAddressPolicy;
  /** Told how each dial to an edge ended, for the connect metrics. */
  observeConnect?: AgentConnectObserver;
}

export class SipTrunkSide implements AgentSide {
  readonly #deps: SipTrunkDeps;
  readonly #call: Call;
  readonly #route: InboundRoute;
  readonly #callerRtp: RtpSession;
  /** The caller's audio; null until the ACK brings it when the caller's INVITE had no offer. */
  #callerAudio: NegotiatedAudio | null;
  /** The agent's answer, once it answered (or sent early media). */
  #agentAudio: NegotiatedAudio | null = null;
  readonly #hooks: TrunkHooks;
  /** Who is calling, and what the edge may learn of it (caller-identity.ts). */
  readonly #caller: CallerIdentity;
  #rtp: RtpSession | null = null;
  #attempt: OutboundCall | null = null;
  #dialog: SessionDialog | null = null;
  #agentLeg: RemoteLeg | null = null;
  #bridge: MediaBridge | null = null;
  #recorder: RecordingPort | null = null;
  #released = false;
  /** The agent's platform, once its target was resolved. */
  #provider: string | null = null;
  /** The agent's REFERs and the NOTIFYs reporting them, which the leg's BYE waits for (RFC 5589 6). */
  readonly #refers: AgentReferReports;
  /** What the agent may ask for by REFER: its resolved target's policy; null without one (the tenant's default applies). */
  #transferPolicy: TransferPolicy | null = null;
  /** Who holds the call: both may (trunk-hold.ts). */
  readonly #hold: TrunkHold;
  /** Digits toward the caller that do not pass through the bridge as they came (trunk-digits.ts); set once connected. */
  #digits: TrunkDigits | null = null;

  constructor(deps: SipTrunkDeps, call: Call, route: InboundRoute, callerRtp: RtpSession, callerAudio: NegotiatedAudio | null, caller: CallerIdentity, hooks: TrunkHooks) {
    this.#deps = deps;
    this.#caller = caller;
    this.#call = call;
    this.#route = route;
    this.#callerRtp = callerRtp;
    this.#callerAudio = callerAudio;
    this.#hooks = hooks;
    this.#hold = new TrunkHold(() => deps.holdMusic());
    this.#refers = new AgentReferReports(deps.clock, deps.dialling.ringTimeoutMs);
  }

  /** Places the agent's leg; resolves when it answered (and is bridged) or failed. */
  /** Dials the agent's edge; the outcome, timed, goes to the connect metrics under the agent's provider. */
  async dial(): Promise<TrunkDialOutcome> {
    const started = performance.now();
    const outcome = await this.#dial();
    const provider = this.#provider ?? 'unknown';
    if (outcome.kind === 'answered') this.#deps.observeConnect?.(provider, { connected: true, seconds: (performance.now() - started) / 1000 });
    else {
      const reason = outcome.reason.reason === 'agent_unreachable' ? 'unreachable' : outcome.reason.sipStatus !== null ? 'rejected' : 'other';
      this.#deps.observeConnect?.(provider, { connected: false, reason });
    }
    return outcome;
  }

  async #dial(): Promise<TrunkDialOutcome> {
    const unreachable = (detail: string): TrunkDialOutcome => {
      this.#call.log.warn({ detail }, 'sip_trunk agent unreachable');
      return { kind: 'failed', callerStatus: 503, reason: { reason: 'agent_unreachable', sipStatus: null, hangupBy: 'gateway' } };
    };
    const record = this.#call.snapshot();
    const target = await this.#deps.resolveSipTrunk({
      tenantId: record.tenant_id, agentId: this.#route.agentId,
      call: { callId: record.id, callControlId: record.call_control_id, from: record.from_number, to: record.to_number, direction: record.direction },
    });
    this.#provider = target.provider ?? null;
    if ('error' in target) return unreachable(target.error);
    if (target.transferPolicy) this.#transferPolicy = target.transferPolicy;
    const targets = await resolveNextHop(this.#deps.dialling.locator, target.uri).catch(() => []);
    if (targets.length === 0) return unreachable(`${target.uri} does not resolve`);
    // docs/SECURITY.md "Outbound addresses": every target is checked before anything is sent, and
    // each INVITE goes to the numeric hop that was checked (inviteWithFailover), never re-resolved.
    const refused = targets.find((hop) => !this.#deps.sipTargets.permits(hop.address));
    if (refused) return unreachable(`${target.uri} resolves to ${refused.address}, refused by the outbound-address policy`);
    const rtp = await this.#deps.media.open();
    if (!rtp) return { kind: 'failed', callerStatus: 503, reason: { reason: 'unavailable', sipStatus: null, hangupBy: 'gateway' } };
    this.#rtp = rtp;
    if (this.#released) return unreachable('released before dialling');
    // Offer the caller's codec first so the bridge relays without transcoding.
    const codecs = [CODECS.PCMU, CODECS.PCMA, CODECS.TELEPHONE_EVENT];
    const plain = legCapabilities(this.#deps.media.address, rtp, this.#callerAudio ? preferCodec(this.#callerAudio.codec, codecs) : codecs, newSdpSessionId());
    const caps = target.mediaEncryption ? { ...plain, srtp: { encryption: target.mediaEncryption, keyring: new SrtpKeyring() } } : plain;
    // RFC 4568 8.3: the keys ride in the INVITE; say so when it would not go over TLS.
    if (target.mediaEncryption === 'required' && targets.some((hop) => hop.protocol !== 'TLS')) {
      this.#call.log.warn({ uri: target.uri }, 'SRTP keys to this agent edge cross the network readable: use sip_transport tls');
    }
    // The edge may move its early media by UPDATE after its reliable 183 (RFC 3311 5.1).
    const early = new EarlyOffers(caps, (audio) => this.#join(audio));
    let ringTimedOut = false;
    const ring = this.#deps.clock.setTimeout(() => {
      ringTimedOut = true;
      this.#attempt?.cancel();
    }, this.#deps.dialling.ringTimeoutMs);
    const identity = towardAgentEdge(this.#caller, this.#deps.dialling.sipHost);
    const outcome = await inviteWithFailover(this.#deps.dialling.ua, {
      target: target.uri,
      from: identity.from,
      to: `sip:${record.to_number}@${this.#deps.dialling.sipHost}`,
      sdp: Buffer.from(createOffer(caps)),
      credentials: target.credentials,
      headers: edgeHeaders(record, target.headers ?? [], identity.headers),
    }, targets, { onAttempt: (attempt) => this.#watch(attempt, caps, early) }).finally(() => ring.cancel());
    this.#attempt = null;
    if (outcome.kind === 'failed') {
      const answered = outcome.response !== undefined;
      if (!answered && !this.#released) this.#call.log.warn({ status: outcome.status, reason: outcome.reason }, 'sip_trunk agent unreachable');
      // docs/CONFIGURATION.md calls.ring_timeout_seconds: our own CANCEL at the ring time-out is
      // `no_answer` by the gateway, and the caller hears 480 as for an agent that did not answer.
      if (ringTimedOut && answered) return { kind: 'failed', callerStatus: 480, reason: { reason: 'no_answer', sipStatus: outcome.status, hangupBy: 'gateway' } };
      const reason: EndReason = answered ? { ...endReasonForFailure(outcome.status), hangupBy: 'agent' } : { reason: 'agent_unreachable', sipStatus: outcome.status, hangupBy: 'gateway' };
      return { kind: 'failed', callerStatus: callerStatusFor(outcome.status, answered), reason };
    }
    this.#dialog = outcome.session;
    const answer = early.agreedIn(outcome.session) ?? processAnswer(outcome.session.remoteAnswer?.toString('utf8') ?? '', caps);
    if (isSdpRejection(answer)) {
      void sendBye(outcome.session, this.#call.log, 'unusable SDP answer from the agent edge');
      return { kind: 'failed', callerStatus: 488, reason: { reason: 'failed', sipStatus: 488, hangupBy: 'gateway' } };
    }
    this.#join(answer);
    // Re-offers from the agent's side (its hold, a media move, a session refresh) are answered
    // from the same port and codec, exactly as on the caller's leg (RFC 3264 8).
    this.#agentLeg = new RemoteLeg(outcome.session, rtp, answer, caps);
    // The edge moved to another codec: the bridge converts to it.
    this.#agentLeg.onAudioChange = (audio) => this.#join(audio);
    this.#call.snapshotDialog('agent', outcome.session);
    this.#call.log.info({ agent: 'sip_trunk', codec: answer.codec.encoding }, 'agent connected');
    return { kind: 'answered' };
  }

  /** The codec the agent answered with, to offer the caller first (late offer); null before. */
  get agentCodec(): CodecDescription | null {
    return this.#agentAudio?.codec ?? null;
  }

  /** The caller's audio, known after the agent answered when the caller's INVITE had no offer: the bridge starts now. */
  bridgeCaller(callerAudio: NegotiatedAudio): void {
    this.#callerAudio = callerAudio;
    if (this.#agentAudio) this.#join(this.#agentAudio);
  }

  /** The caller hung up or was refused before the agent answered: CANCEL the agent's INVITE (RFC 3261 9.1). */
  cancel(): void {
    this.release('caller went away');
  }

  transferPolicy(): Promise<TransferPolicy | null> {
    return Promise.resolve(this.#transferPolicy);
  }

  /**
   * Once the caller's leg is answered: the recording taps, the agent's BYE, REFER and INFO digits,
   * and digits toward the caller as the carrier takes them (`dtmf`, docs/CONFIGURATION.md).
   */
  connected(remote: RemoteLeg, recorder: RecordingPort | null, ended: AgentEnded, asks: AgentAsks, dtmf: 'auto' | 'info' = 'auto'): AgentSide {
    // A transfer that came first released the leg already: nothing is left to tap or watch.
    if (this.#released) return this;
    this.#digits = new TrunkDigits({
      clock: this.#deps.clock, log: this.#call.log, rtp: this.#callerRtp, dialog: remote.dialog, agentDialog: this.#dialog, dtmf,
      audio: () => this.#callerAudio ?? remote.audio,
      muteAgent: (muted) => this.#bridge?.setMute('b', muted),
      isHeld: () => this.#hold.isHeld,
    });
    this.#recorder = recorder;
    const bridge = this.#bridge;
    if (bridge && recorder) {
      const caller = recorder.channelSink('remote');
      const agent = recorder.channelSink('agent');
      bridge.setTap('a', 'received', (frame) => caller.writeFrame(frame));
      bridge.setTap('b', 'received', (frame) => agent.writeFrame(frame));
    }
    // The agent's leg falling silent ends the call as the caller's does (the caller's is the connected call's to watch).
    this.#rtp?.watchMedia(() => ended({ reason: 'media_timeout', sipStatus: null, hangupBy: 'gateway' }));
    this.#dialog?.events.on('bye', () => ended({ reason: 'completed', sipStatus: null, hangupBy: 'agent' }));
    if (this.#dialog) this.#refers.accept(this.#dialog, asks);
    return this;
  }

  start(): Promise<void> {
    return Promise.resolve();
  }

  hold(): void {
    this.#hold.set('api', true, this.#bridge, this.#recorder);
  }

  /**
   * The caller put the call on hold itself: the edge hears silence instead of its hold music, as
   * on an API hold, and the caller gets nothing the direction forbids (the session drops it).
   */
  remoteHold(held: boolean): void {
    this.#hold.set('remote', held, this.#bridge, this.#recorder);
  }

  /** The caller's leg moved to another codec: the bridge converts to it. */
  updateAudio(audio: NegotiatedAudio): void {
    this.#callerAudio = audio;
    if (this.#bridge && !this.#released) this.#bridge.replaceLeg('a', bridgeLegOf(this.#callerRtp, audio));
  }

  /**
   * A key the caller signalled by SIP INFO goes to the agent as RFC 4733 events on the bridged
   * RTP, as platforms take it, or, when the agent leg has no telephone-event, as the same INFO.
   * Nothing while held (docs/API.md "Calls"). Either way the tenant hears of it (`call.dtmf`).
   */
  receiveDigit(digit: string): void {
    this.#call.pressed(digit);
    const bridge = this.#bridge;
    if (!bridge || bridge.isHeld) return;
    this.#call.log.debug({ digit }, 'DTMF from the caller by SIP INFO');
    if (bridge.sendDtmf('b', digit) === '') return;
    void this.#dialog?.info(Buffer.from(`Signal=${digit}\r\nDuration=160\r\n`), 'application/dtmf-relay')
      .catch((err: unknown) => this.#call.log.warn({ err }, 'DTMF by SIP INFO to the agent edge could not be sent'));
  }

  /** docs/API.md "Digits toward the callee": toward the caller, between the agent edge's own. */
  sendDigits(digits: string): void {
    this.#digits?.send(digits, () => this.#call.log.debug({ digits }, 'digits sent to the caller'));
  }

  unhold(): void {
    this.#hold.set('api', false, this.#bridge, this.#recorder);
  }

  release(reason: string): void {
    if (this.#released) return;
    this.#released = true;
    this.#call.log.info({ reason }, 'agent released');
    this.#digits?.stop();
    this.#attempt?.cancel();
    this.#bridge?.close();
    this.#bridge = null;
    const dialog = this.#dialog;
    if (dialog) void this.#refers.reported().then(() => sendBye(dialog, this.#call.log, 'sip_trunk leg released'));
    if (this.#agentLeg) this.#agentLeg.close();
    else this.#rtp?.close();
  }

  /** The agent edge's RTP leg, once its answer (or early media) was known. */
  quality(): CallQuality {
    const rtp = this.#rtp;
    const audio = this.#agentAudio;
    return { legs: rtp && audio ? [legQuality('agent', audio.codec.encoding, rtp.stats())] : [], agent_stream: null };
  }

  describe(): SipTrunkAgentSnapshot {
    const stats = this.#rtp?.stats();
    return {
      kind: 'sip_trunk', connected: this.#dialog !== null && !this.#dialog.isEnded, bridged: this.#bridge !== null,
      rtp: this.#agentLeg?.describe() ?? (stats ? { local_rtp_port: stats.localPort, packets_sent: stats.packetsSent, packets_received: stats.packetsReceived } : null),
    };
  }

  #watch(attempt: OutboundCall, caps: LocalCapabilities, early: EarlyOffers): void {
    this.#attempt = attempt;
    this.#call.traceSip(attempt.callId, 'agent');
    early.watch(attempt);
    if (this.#released) attempt.cancel();
    attempt.events.on('progress', (response) => {
      if (response.status <= 100) return;
      // RFC 3960: a 183 with SDP is early media; relay it to the caller before the answer.
      const early = response.body.length > 0 ? processAnswer(response.body.toString('utf8'), caps) : null;
      const usable = early !== null && !isSdpRejection(early);
      if (usable) this.#join(early);
      // Early media reaches the caller only when the caller's audio is known (an offer in its INVITE).
      this.#hooks.onRinging(usable && this.#callerAudio !== null);
    });
  }

  /**
   * Points the agent leg's RTP at the agent's answer and bridges it with the caller's, or re-points
   * the bridge when the final answer differs from the early one. Without the caller's audio yet
   * (late offer) the bridge waits for {@link bridgeCaller}.
   */
  #join(audio: NegotiatedAudio): void {
    const rtp = this.#rtp;
    if (!rtp || this.#released) return;
    wireRemote(rtp, audio);
    this.#agentAudio = audio;
    if (!this.#callerAudio) return;
    const b = bridgeLegOf(rtp, audio);
    if (this.#bridge) return this.#bridge.replaceLeg('b', b);
    this.#bridge = new MediaBridge({
      clock: this.#deps.clock, a: bridgeLegOf(this.#callerRtp, this.#callerAudio), b,
      delegate: { onDtmf: (leg, digit, via) => { if (leg === 'b' && via === 'rfc4733') this.#digits?.agentEvent(digit); } },
    });
    // A hold that came before the bridge (a late offer's ACK) applies now.
    this.#hold.apply(this.#bridge, this.#recorder);
  }
}
