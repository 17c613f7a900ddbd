/**
 * @module Blind transfer of the remote party (docs/API.md "Calls", POST /v1/calls/transfer).
 * `bridge` (the default): the gateway dials the target over the call's carrier and, once it
 * answers, releases the agent and bridges the remote party's RTP to the target's. `refer`: the
 * gateway asks the carrier to do it (RFC 3515 REFER), releases the agent once the carrier accepts,
 * and follows the outcome in the NOTIFY sipfrag (RFC 3515 2.4.5); on success it leaves with BYE
 * (RFC 5589 6).
 */
import { bridgeLegOf, MediaBridge, type AudioSource, type NegotiatedAudio, type RtpSession } from '../../media/index.js';
import type { OutboundCall, SessionDialog } from '../../sip/index.js';
import type { Call } from '../call.js';
import { sendBye } from './bye.js';
import { formatNumber, requestUriFor, type CarrierProfile } from '../setup/carrier-profile.js';
import { dialTransferTarget, isSipAddress, type TransferDialDeps } from './transfer-dial.js';
import type { EndReason } from '../ending/end-reason.js';
import type { RecordingPort } from './recording-port.js';
import { wireRemote, type RemoteLeg } from './remote-leg.js';
import { isTransferActive, nextTransferPhase, type TransferEvent, type TransferPhase } from './transfer-state.js';
import type { TransferSnapshot } from '../session-snapshot.js';
import { legQuality, type LegQuality } from '../quality/call-quality.js';

/**
 * Hears how a transfer goes, as SIP statuses: 200 once the target is connected, the failure's
 * status otherwise; before that, a carrier's provisional progress of a REFER transfer (180).
 */
export type TransferProgress = (status: number, reason: string) => void;

export interface TransferHooks {
  /** Stops the agent side of the call (the remote party's RTP stays open). */
  releaseAgent(): void;
  /** The call's recording, when it has one (it may open after the transfer started). */
  recorder(): RecordingPort | null;
  end(reason: EndReason, byeRemote: boolean): Promise<void>;
  /** The target answered a held call: the hold (and its paused transcription) ends. */
  offHold(): void;
}

/** What a transfer uses: a new leg's SIP and media (transfer-dial.ts), and the music its held party hears. */
export interface TransferDeps extends TransferDialDeps {
  holdMusic(): AudioSource | null;
}

export class Transfer {
  readonly #deps: TransferDeps;
  readonly #call: Call;
  readonly #remote: RemoteLeg;
  readonly #carrier: CarrierProfile;
  readonly #hooks: TransferHooks;
  #phase: TransferPhase = 'dialing';
  #to = '';
  #attempt: OutboundCall | null = null;
  #target: { dialog: SessionDialog; rtp: RtpSession; codec: string } | null = null;
  #bridge: MediaBridge | null = null;
  #releasedAgent = false;
  #progress: TransferProgress | null = null;
  /** Why the transfer failed, as the status its progress reports. */
  #failure = { status: 503, reason: 'Service Unavailable' };
  /** Who a completed REFER transfer is put down to in `hangup_by`. */
  #requestedBy: 'api' | 'agent' = 'api';

  constructor(deps: TransferDeps, call: Call, remote: RemoteLeg, carrier: CarrierProfile, hooks: TransferHooks) {
    this.#deps = deps;
    this.#call = call;
    this.#remote = remote;
    this.#carrier = carrier;
    this.#hooks = hooks;
  }

  /** Still dialling, bridged or waiting for the carrier: a second transfer must wait. */
  get active(): boolean {
    return isTransferActive(this.#phase);
  }

  get bridged(): boolean {
    return this.#bridge !== null;
  }

  get releasedAgent(): boolean {
    return this.#releasedAgent;
  }

  /** The carrier completed a REFER transfer: the call ends as `transferred`. */
  get referCompleted(): boolean {
    return this.#method === 'refer' && this.#phase === 'connected';
  }

  /**
   * `refer` where the carrier is so configured, for numbers only: a SIP address is the tenant's
   * own PBX, which the gateway reaches itself (docs/DECISIONS.md "Transfer targets").
   */
  get #method(): 'bridge' | 'refer' {
    return this.#carrier.transfer === 'refer' && !isSipAddress(this.#to) ? 'refer' : 'bridge';
  }

  /** Starts the transfer to `to`, asked for by the API or by the agent; `progress` hears the outcome. */
  start(to: string, requestedBy: 'api' | 'agent' = 'api', progress: TransferProgress | null = null): void {
    this.#to = to;
    this.#requestedBy = requestedBy;
    this.#progress = progress;
    this.#call.setTransfer(to, 'dialing');
    const run = this.#method === 'refer' ? this.#refer() : this.#dial();
    run.catch((err: unknown) => {
      this.#call.log.error({ err }, 'transfer failed');
      this.#fail();
    });
  }

  hold(): void {
    this.#bridge?.hold({ music: this.#deps.holdMusic() ?? undefined });
    this.#hooks.recorder()?.pause();
  }

  unhold(): void {
    this.#bridge?.resume();
    this.#hooks.recorder()?.resume();
  }

  /** The remote party moved to another codec while bridged to the target: the bridge converts to it. */
  remoteAudioChanged(audio: NegotiatedAudio): void {
    if (!this.#isClosed()) this.#bridge?.replaceLeg('a', bridgeLegOf(this.#remote.rtp, audio));
  }

  describe(): TransferSnapshot {
    return { to: this.#to, method: this.#method, phase: this.#phase, target: this.#target ? { rtp_port: this.#target.rtp.localPort } : null };
  }

  /** The bridged target's RTP leg for the CDR (docs/API.md "Call quality"), read before {@link close}; null without one. */
  quality(): LegQuality | null {
    const target = this.#target;
    return target ? legQuality('transfer_target', target.codec, target.rtp.stats()) : null;
  }

  /** Tears the transfer leg down (the call ended): CANCEL while dialling, BYE once answered. */
  close(): void {
    if (this.#transition('close') === 'stay') return;
    this.#attempt?.cancel();
    this.#bridge?.close();
    const target = this.#target;
    this.#target = null;
    if (target) {
      void sendBye(target.dialog, this.#call.log, 'transfer target released');
      target.rtp.close();
    }
  }

  async #dial(): Promise<void> {
    const outcome = await dialTransferTarget(this.#deps, this.#call, this.#carrier, this.#remote.audio, this.#to, {
      onAttempt: (attempt) => { this.#attempt = attempt; },
      stopped: () => this.#isClosed(),
    });
    this.#attempt = null;
    if (outcome.kind === 'stopped') return;
    if (outcome.kind === 'failed') return this.#fail(outcome.status, outcome.reason);
    this.#connectBridge(outcome.dialog, outcome.rtp, outcome.audio);
  }

  #connectBridge(dialog: SessionDialog, rtp: RtpSession, audio: NegotiatedAudio): void {
    wireRemote(rtp, audio);
    this.#target = { dialog, rtp, codec: audio.codec.encoding };
    // An agent that asked by REFER hears the outcome (NOTIFY 200) before its leg is released (RFC 5589 6).
    this.#report(200, 'OK');
    this.#releasedAgent = true;
    this.#hooks.releaseAgent();
    const bridge = new MediaBridge({ clock: this.#deps.clock, a: bridgeLegOf(this.#remote.rtp, this.#remote.audio), b: bridgeLegOf(rtp, audio) });
    this.#bridge = bridge;
    // The remote party's silence stays the connected call's to watch; the target's ends the call
    // the same way, as a sip_trunk agent leg's does (docs/ARCHITECTURE.md "Media ownership").
    rtp.watchMedia(() => void this.#hooks.end({ reason: 'media_timeout', sipStatus: null, hangupBy: 'gateway' }, true));
    // The recording goes on: the remote party stays on the left, the transfer target takes the agent's channel.
    const recorder = this.#hooks.recorder();
    if (recorder) {
      const remote = recorder.channelSink('remote');
      const target = recorder.channelSink('agent');
      bridge.setTap('a', 'received', (frame) => remote.writeFrame(frame));
      bridge.setTap('b', 'received', (frame) => target.writeFrame(frame));
    }
    // A transfer connects two people: a held call comes off hold, or both would stay muted.
    if (this.#call.snapshot().on_hold) this.#hooks.offHold();
    this.#transition('answered');
    dialog.events.on('bye', () => void this.#hooks.end({ reason: 'completed', sipStatus: null, hangupBy: 'callee' }, true));
  }

  async #refer(): Promise<void> {
    const uri = this.#carrier.outboundUri ?? this.#remote.dialog.dialog.remoteTarget;
    const referTo = requestUriFor(uri, formatNumber(this.#to, this.#carrier));
    this.#remote.dialog.events.on('notify', (request) => this.#onNotify(request.body.toString('utf8')));
    const status = await this.#remote.dialog.refer(referTo);
    if (this.#isClosed()) return;
    if (status < 200 || status >= 300) return this.#fail();
    // RFC 3515 2.4.2: 202 means accepted, not done; the agent leaves now (docs/API.md "Calls").
    // A NOTIFY that overtook the 202 may have settled the transfer already (transfer-state.ts).
    if (this.#phase !== 'dialing') return void this.#transition('accepted');
    this.#releasedAgent = true;
    this.#hooks.releaseAgent();
    this.#transition('accepted');
  }

  /** RFC 3515 2.4.5: the NOTIFY body is a sipfrag whose status line tells how the transfer went. */
  #onNotify(sipfrag: string): void {
    const line = /^SIP\/2\.0 (\d{3}) ?([^\r\n]*)/.exec(sipfrag.trimStart());
    const status = Number(line?.[1] ?? 0);
    const reason = (line?.[2] ?? '').slice(0, 100);
    if (status < 200) {
      // Provisional progress (180 Ringing) reaches an agent that asked by REFER too (RFC 3515 2.4.5).
      if (status > 100) this.#progress?.(status, reason);
      return;
    }
    if (status >= 300) this.#failure = { status, reason };
    if (this.#transition(status < 300 ? 'notify-2xx' : 'notify-failure') === 'stay') return;
    if (status < 300) void this.#hooks.end({ reason: 'transferred', sipStatus: null, hangupBy: this.#requestedBy }, true);
    // The agent is gone and the carrier could not move the party: nobody is left to talk to.
    else if (this.#releasedAgent) void this.#hooks.end({ reason: 'failed', sipStatus: status, hangupBy: 'gateway' }, true);
  }

  /** A method, not a field read, so narrowing does not survive the awaits in between. */
  #isClosed(): boolean {
    return this.#phase === 'closed';
  }

  /** Tells whoever asked how the transfer ended, once. */
  #report(status: number, reason: string): void {
    const progress = this.#progress;
    this.#progress = null;
    progress?.(status, reason);
  }

  #fail(status?: number, reason?: string): void {
    if (status !== undefined && status >= 300) this.#failure = { status, reason: reason ?? 'Failed' };
    this.#transition('fail');
  }

  /**
   * The one method that changes the phase (transfer-state.ts has the diagram): applies the pure
   * next-state function, which throws on an illegal event, and records the outcome on the call as
   * the phase is entered. Returns 'stay' when the event left the phase as it was.
   */
  #transition(event: TransferEvent): 'moved' | 'stay' {
    const from = this.#phase;
    const to = nextTransferPhase(from, event);
    if (to === from) return 'stay';
    this.#phase = to;
    switch (to) {
      case 'bridged': case 'connected':
        this.#call.setTransfer(this.#to, 'connected');
        this.#report(200, 'OK');
        break;
      case 'failed':
        this.#call.setTransfer(this.#to, 'failed');
        this.#report(this.#failure.status, this.#failure.reason);
        break;
      case 'closed':
        // The call ended while the target was being dialled (RFC 3261 487 for the request that stopped).
        this.#report(487, 'Request Terminated');
        break;
      case 'dialing': case 'referred':
        break;
    }
    return 'moved';
  }
}
