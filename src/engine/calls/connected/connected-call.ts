/**
 * @module An answered call: the remote party's leg joined to the agent's side (docs/API.md "Calls"
 * and "Agent WebSocket protocol"), with hold, hang-up, recording, transcript and the hand-over to a transfer. Every flow
 * (outbound, inbound media_bridge, inbound sip_trunk) ends up here once the remote leg is up.
 */
import { dtmfFromInfo, type NegotiatedAudio } from '../../media/index.js';
import type { AgentEnded, AgentSide, TranscriptTurn } from './agent-side.js';
import { sendBye } from './bye.js';
import type { Call } from '../call.js';
import type { CallCommandFailure } from '../call-control.js';
import type { CarrierProfile } from '../setup/carrier-profile.js';
import type { EndReason, HangupBy } from '../ending/end-reason.js';
import type { Clock } from '../../../common/clock.js';
import type { RecordingPort } from './recording-port.js';
import { sameMediaFormat, type RemoteLeg } from './remote-leg.js';
import { CallOutputs, type CallOutputsDeps } from './call-outputs.js';
import { Transfer, type TransferDeps, type TransferProgress } from './transfer.js';
import { agentAsks, type AgentAsks } from './agent-transfer.js';
import { NO_AGENT_TRANSFERS, type TransferPolicy } from './transfer-policy.js';
import type { TenantId } from '../../../common/ids.js';
import type { ConnectedSessionSnapshot } from '../session-snapshot.js';
import type { CallQuality } from '../quality/call-quality.js';

/** How the remote party is named in `hangup_by`: the callee of an outbound call, the caller of an inbound one. */
export const remoteParty = (call: Call): HangupBy => (call.snapshot().direction === 'outbound' ? 'callee' : 'caller');

/** Builds the agent side once the recording (if any) is open; `ended` reports the agent hanging up, `asks` carries its transfers. */
export type AgentSideFactory = (recorder: RecordingPort | null, ended: AgentEnded, asks: AgentAsks) => AgentSide & { readonly turns?: readonly TranscriptTurn[] };

/** Longest wait for the answer to our BYE (a non-INVITE transaction gives up after 64*T1 anyway). */
const BYE_WAIT_MS = 5_000;

/** What an answered call uses beyond its legs: where recordings go, the gateway's transcription, and what a transfer needs. */
export interface ConnectedCallDeps {
  clock: Clock;
  outputs: CallOutputsDeps;
  transfer: TransferDeps;
  /** Numbers no agent may transfer to, whatever its policy (`calls.transfer_denied_prefixes`). */
  deniedTransferPrefixes: readonly string[];
  /** The tenant's default `transfer_policy`, for agents without their own (docs/API.md "Transfers asked by the agent"); null for none. */
  tenantTransferPolicy?(tenantId: TenantId): Promise<TransferPolicy | null>;
}

export class ConnectedCall {
  readonly #deps: ConnectedCallDeps;
  readonly #call: Call;
  readonly #remote: RemoteLeg;
  readonly #carrier: CarrierProfile;
  readonly #makeAgent: AgentSideFactory;
  /**
   * An agent side that holds the remote party's media before {@link start} makes `#agent`: a
   * sip_trunk leg bridges the caller from the setup on. A transfer that wins the race with start
   * lets it go, so the transfer's bridge can take the media (docs/ARCHITECTURE.md "Media ownership").
   */
  readonly #earlyAgent: Pick<AgentSide, 'release'> | null;
  #agent: (AgentSide & { readonly turns?: readonly TranscriptTurn[] }) | null = null;
  readonly #outputs: CallOutputs;
  #transfer: Transfer | null = null;
  #ending: Promise<void> | null = null;
  /** The recording and transcription being opened (start); the end waits for it, to close what it opened. */
  #opening: Promise<void> | null = null;
  /** The remote party holds the call itself (RFC 3264 §8.4); the API's hold is the call's `on_hold`. */
  #remoteHeld = false;
  /** The remote leg's audio when the agent side was built from it. */
  #answeredAudio: NegotiatedAudio;

  constructor(deps: ConnectedCallDeps, call: Call, remote: RemoteLeg, carrier: CarrierProfile, makeAgent: AgentSideFactory, earlyAgent: Pick<AgentSide, 'release'> | null = null) {
    this.#deps = deps;
    this.#earlyAgent = earlyAgent;
    this.#call = call;
    this.#remote = remote;
    this.#carrier = carrier;
    this.#makeAgent = makeAgent;
    this.#answeredAudio = remote.audio;
    this.#outputs = new CallOutputs(deps.outputs, call);
    remote.dialog.events.on('bye', () => {
      const reason: EndReason = this.#transfer?.referCompleted
        ? { reason: 'transferred', sipStatus: null, hangupBy: remoteParty(call) }
        : { reason: 'completed', sipStatus: null, hangupBy: remoteParty(call) };
      void this.end(reason, false);
    });
    // Out-of-band DTMF (the dialog answered the INFO 200 already); RFC 4733 digits come with the RTP.
    remote.dialog.events.on('info', (info) => {
      const digit = dtmfFromInfo(info.headers.get('Content-Type'), info.body);
      if (digit !== null) this.#agent?.receiveDigit(digit);
    });
    remote.dialog.events.on('terminated', (why) => {
      if (why === 'ack-timeout' || why === 'session-expired') void this.end({ reason: 'media_timeout', sipStatus: null, hangupBy: 'gateway' }, false);
    });
    // The time-out is the call's for the session's whole life, whoever owns its packets meanwhile
    // (the agent leg, a transfer's bridge): docs/ARCHITECTURE.md "Media ownership".
    remote.rtp.watchMedia(() => void this.end({ reason: 'media_timeout', sipStatus: null, hangupBy: 'gateway' }, true));
    remote.onAudioChange = (audio, previous) => this.#remoteAudioChanged(audio, previous);
  }

  /**
   * A re-offer from the remote party was accepted: the media follows a new codec, and its own
   * hold (RFC 3264 §8.4: sendonly, inactive or c=0.0.0.0) and resume reach the agent as `hold`
   * and `unhold` with `source: remote` (docs/DECISIONS.md, "Hold and media direction").
   */
  #remoteAudioChanged(audio: NegotiatedAudio, previous: NegotiatedAudio): void {
    if (this.#call.isEnded) return;
    if (!sameMediaFormat(audio, previous)) {
      this.#call.log.info({ from: previous.codec.encoding, to: audio.codec.encoding }, 'the remote party moved the call to another codec');
      this.#transfer?.remoteAudioChanged(audio);
      this.#agent?.updateAudio(audio);
    }
    if (audio.remote.onHold !== previous.remote.onHold) {
      this.#call.log.info({ direction: audio.direction }, audio.remote.onHold ? 'the remote party put the call on hold' : 'the remote party resumed the call');
      this.#remoteHeld = audio.remote.onHold;
      if (this.#transfer?.bridged !== true) this.#agent?.remoteHold(audio.remote.onHold);
      // docs/API.md "Calls": transcription pauses with the recording, on any hold.
      if (this.#remoteHeld) this.#outputs.transcriber?.pause();
      else if (!this.#call.snapshot().on_hold) this.#outputs.transcriber?.resume();
    }
  }

  /** Opens the recording (when asked) and the agent; an agent that cannot be reached ends the call `agent_unreachable`. */
  async start(): Promise<void> {
    this.#opening = this.#outputs.open(this.#deps.clock.monotonic(), () => this.#ending === null);
    await this.#opening;
    // The agent side feeds the recording; with transcription on it feeds both through the tap.
    const recording = this.#outputs.feed;
    this.#answeredAudio = this.#remote.audio;
    const agent = this.#makeAgent(recording, (reason) => {
      if (!this.#call.isEnded && !this.#transfer?.releasedAgent) void this.end(reason, true);
    }, agentAsks(this.#call, {
      deniedPrefixes: this.#deps.deniedTransferPrefixes,
      // The agent's own policy, else its tenant's default, else none (docs/DECISIONS.md "Transfer policy defaults").
      policy: async () => await this.#agent?.transferPolicy()
        ?? await this.#deps.tenantTransferPolicy?.(this.#call.snapshot().tenant_id) ?? NO_AGENT_TRANSFERS,
      start: (number, progress) => this.transfer(number, 'agent', progress),
    }));
    this.#agent = agent;
    // The call is answered (and takes commands) while the recording and the agent are still being
    // set up: a hang-up or a transfer may already have happened, and then the agent goes at once.
    if (this.#agentNoLongerWanted()) return;
    try {
      await agent.start();
    } catch (err) {
      if (this.#agentNoLongerWanted()) return;
      this.#call.log.warn({ err: (err as Error).message }, 'agent unreachable');
      await this.end({ reason: 'agent_unreachable', sipStatus: null, hangupBy: 'gateway' }, true);
      return;
    }
    if (this.#agentNoLongerWanted()) return;
    if (this.#call.snapshot().on_hold) {
      agent.hold();
      this.#outputs.transcriber?.pause();
    }
    // A re-offer may have come while the agent connected.
    if (!sameMediaFormat(this.#remote.audio, this.#answeredAudio)) agent.updateAudio(this.#remote.audio);
    if (this.#remote.audio.remote.onHold) agent.remoteHold(true);
  }

  /** Releases the agent side when the call ended or a transfer took the remote party meanwhile. */
  #agentNoLongerWanted(): boolean {
    const released = this.#call.isEnded || this.#transfer?.releasedAgent === true;
    if (released) this.#agent?.release(this.#call.isEnded ? 'call ended' : 'transferred');
    return released;
  }

  hold(): CallCommandFailure | null {
    if (this.#call.isEnded) return { error: 'call_not_active' };
    if (this.#transfer?.bridged) this.#transfer.hold();
    else this.#agent?.hold();
    // docs/API.md "Calls": transcription pauses with the recording, whoever holds the audio now.
    this.#outputs.transcriber?.pause();
    this.#call.setHold(true);
    return null;
  }

  unhold(): CallCommandFailure | null {
    if (this.#call.isEnded) return { error: 'call_not_active' };
    if (this.#transfer?.bridged) this.#transfer.unhold();
    else this.#agent?.unhold();
    if (!this.#remoteHeld) this.#outputs.transcriber?.resume();
    this.#call.setHold(false);
    return null;
  }

  /** docs/API.md "Digits toward the callee": to the remote party, while the agent side has it (not once a transfer took it). */
  sendDigits(digits: string): CallCommandFailure | null {
    if (this.#call.isEnded || !this.#agent || this.#transfer?.bridged) return { error: 'call_not_active' };
    this.#agent.sendDigits(digits);
    return null;
  }


  /** Blind transfer of the remote party, asked for by the API or by the agent (agent-transfer.ts). */
  transfer(to: string, requestedBy: 'api' | 'agent' = 'api', progress: TransferProgress | null = null): CallCommandFailure | null {
    if (this.#call.isEnded) return { error: 'call_not_active' };
    if (this.#transfer?.active) return { error: 'transfer_in_progress' };
    this.#transfer = new Transfer(this.#deps.transfer, this.#call, this.#remote, this.#carrier, {
      releaseAgent: () => (this.#agent ?? this.#earlyAgent)?.release('transferred'),
      recorder: () => this.#outputs.recorder,
      end: (reason, byeRemote) => this.end(reason, byeRemote),
      offHold: () => { this.#outputs.transcriber?.resume(); this.#call.setHold(false); },
    });
    this.#transfer.start(to, requestedBy, progress);
    return null;
  }

  session(): ConnectedSessionSnapshot {
    const { recorder, transcriber } = this.#outputs;
    return {
      remote: this.#remote.describe(),
      agent: this.#agent?.describe() ?? null,
      transfer: this.#transfer?.describe() ?? null,
      recording: recorder ? { paused: recorder.isPaused } : null,
      transcription: transcriber ? { engine: this.#outputs.transcriptionEngine, paused: transcriber.isPaused } : null,
    };
  }

  /**
   * Ends the call once, and never fails (docs/RELIABILITY.md, storage failures): the call is
   * marked ended, the agent and every leg released, BYE sent to the remote party when asked (not
   * when the remote party ended it); then, once the recording and the gateway's transcript are
   * complete, the final record is written with both transcripts in one write, so a call first
   * read as `ended` has them. The store keeps what the database refuses in the CDR journal, and
   * the call's slot is freed either way. The promise resolves once the BYE is answered or given up.
   */
  end(reason: EndReason, byeRemote: boolean): Promise<void> {
    this.#ending ??= this.#teardown(reason, byeRemote);
    return this.#ending;
  }

  async #teardown(reason: EndReason, byeRemote: boolean): Promise<void> {
    this.#call.markEnded(reason);
    // The agent's and the transfer target's figures before they are released, the carrier leg's
    // just before its media closes (docs/API.md "Call quality").
    const quality: CallQuality = { legs: [], agent_stream: null };
    this.#step('keep the call quality', () => this.#keepQuality(quality));
    this.#step('release the agent', () => this.#agent?.release(reason.reason === 'completed' ? 'call ended' : reason.reason));
    this.#step('close the transfer', () => this.#transfer?.close());
    this.#step('report SRTP failures', () => this.#reportSrtpFailures());
    // BYE first, then the media (docs/RELIABILITY.md "Ending a call"): the remote party learns of
    // the end before its RTP meets a closed port. Its answer may never come (a vanished carrier,
    // or the user agent shutting down), so the wait for it is bounded; a failure is logged once.
    let bye: Promise<void> = Promise.resolve();
    this.#step('send BYE', () => {
      if (byeRemote && !this.#remote.dialog.isEnded) bye = this.#bounded(sendBye(this.#remote.dialog, this.#call.log, `call ended ${reason.reason}`));
    });
    this.#step('keep the carrier leg quality', () => {
      quality.legs.unshift(this.#remote.quality('carrier'));
      this.#call.setQuality(quality);
    });
    this.#step('close the media', () => this.#remote.close());
    await this.#opening;
    const gatewayTurns = await this.#outputs.close();
    const providerTurns = this.#agent?.turns ?? [];
    this.#step('store the final record', () => this.#call.finish([
      ...(providerTurns.length > 0 ? [{ source: 'provider' as const, turns: [...providerTurns] }] : []),
      ...(gatewayTurns.length > 0 ? [{ source: 'gateway' as const, turns: gatewayTurns }] : []),
    ]));
    await bye;
  }

  #keepQuality(quality: CallQuality): void {
    const agent = (this.#agent ?? this.#earlyAgent) as Partial<Pick<AgentSide, 'quality'>> | null;
    const part = agent?.quality?.();
    if (part) {
      quality.legs.push(...part.legs);
      quality.agent_stream = part.agent_stream;
    }
    const target = this.#transfer?.quality();
    if (target) quality.legs.push(target);
  }

  /** One step of the teardown: a failure is logged and the teardown goes on. */
  #step(what: string, work: () => void): void {
    try {
      work();
    } catch (err) {
      this.#call.log.error({ err }, `cannot ${what} while ending the call`);
    }
  }

  /**
   * SRTP that failed authentication is either an attack or keys that do not match (a carrier
   * encrypting with another key than the one it sent): the second is a silent call, so it is
   * logged once, when the call ends, with what did arrive.
   */
  #reportSrtpFailures(): void {
    const media = this.#remote.rtp.stats();
    if (media.packetsUnauthenticated === 0) return;
    this.#call.log.warn({ srtp: media.srtpSuite, packets_unauthenticated: media.packetsUnauthenticated, packets_received: media.packetsReceived },
      'SRTP packets from the remote party failed authentication');
  }

  /** Waits for `work` (which never rejects: {@link sendBye} logs its failure) at most {@link BYE_WAIT_MS}. */
  #bounded(work: Promise<void>): Promise<void> {
    return new Promise((resolve) => {
      const timer = this.#deps.clock.setTimeout(resolve, BYE_WAIT_MS);
      void work.finally(() => {
        timer.cancel();
        resolve();
      });
    });
  }
}
