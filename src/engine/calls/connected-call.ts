/**
 * @module An answered call: the remote party's leg joined to the agent (contract sections 4 and
 * 5), with hold, hang-up, recording and the hand-over to a transfer. Inbound and outbound flows
 * both end up here once the remote leg is up.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { StereoWavRecorder } from '../media/index.js';
import { AgentMediaLeg } from './agent-media/agent-media-leg.js';
import type { Call } from './call.js';
import type { CallCommandFailure } from './call-control.js';
import type { CarrierProfile } from './carrier-profile.js';
import type { EndReason, HangupBy } from './end-reason.js';
import type { CallEngineContext } from './engine-context.js';
import type { AgentLink, AgentLinkClose, AgentTarget } from './ports.js';
import type { RemoteLeg } from './remote-leg.js';
import { recordingPathOf } from './recovery.js';
import { Transfer } from './transfer.js';

/** How the remote party is named in `hangup_by`: the callee of an outbound call, the caller of an inbound one. */
export const remoteParty = (call: Call): HangupBy => (call.snapshot().direction === 'outbound' ? 'callee' : 'caller');

export class ConnectedCall {
  readonly #ctx: CallEngineContext;
  readonly #call: Call;
  readonly #remote: RemoteLeg;
  readonly #carrier: CarrierProfile;
  readonly #agentTarget: AgentTarget;
  #leg: AgentMediaLeg | null = null;
  #link: AgentLink | null = null;
  #recorder: StereoWavRecorder | null = null;
  #transfer: Transfer | null = null;
  #ending: Promise<void> | null = null;

  constructor(ctx: CallEngineContext, call: Call, remote: RemoteLeg, carrier: CarrierProfile, agent: AgentTarget) {
    this.#ctx = ctx;
    this.#call = call;
    this.#remote = remote;
    this.#carrier = carrier;
    this.#agentTarget = agent;
    remote.dialog.events.on('bye', () => void this.end({ reason: 'completed', sipStatus: null, hangupBy: remoteParty(call) }, false));
    remote.dialog.events.on('terminated', (why) => {
      if (why === 'ack-timeout' || why === 'session-expired') void this.end({ reason: 'media_timeout', sipStatus: null, hangupBy: 'gateway' }, false);
    });
    remote.rtp.delegate.onMediaTimeout = () => void this.end({ reason: 'media_timeout', sipStatus: null, hangupBy: 'gateway' }, true);
  }

  /** Opens the recording (when asked) and the agent; a failed agent ends the call `agent_unreachable`. */
  async start(): Promise<void> {
    const record = this.#call.snapshot();
    if (record.record) this.#recorder = await this.#openRecorder();
    const leg = new AgentMediaLeg({
      clock: this.#ctx.clock, rtp: this.#remote.rtp, audio: this.#remote.audio, recorder: this.#recorder,
      holdMusic: null, onDigit: (digit) => this.#call.log.debug({ digit }, 'DTMF from the remote party'),
    });
    this.#leg = leg;
    // The agent leg owns the RTP delegate now; keep the media time-out on this side.
    this.#remote.rtp.delegate.onMediaTimeout = () => void this.end({ reason: 'media_timeout', sipStatus: null, hangupBy: 'gateway' }, true);
    const link = this.#ctx.connectAgent({
      call: { callId: record.id, callControlId: record.call_control_id, from: record.from_number, to: record.to_number, direction: record.direction },
      tenantId: record.tenant_id,
      agent: this.#agentTarget,
      handlers: {
        ...leg.handlers,
        onConversationId: (id) => this.#call.setConversationId(id),
        onClose: (info) => this.#agentClosed(info),
      },
    });
    this.#link = link;
    try {
      await link.start();
    } catch (err) {
      this.#call.log.warn({ err: (err as Error).message }, 'agent unreachable');
      this.#link = null;
      await this.end({ reason: 'agent_unreachable', sipStatus: null, hangupBy: 'gateway' }, true);
      return;
    }
    if (this.#call.isEnded) {
      link.close('call ended');
      return;
    }
    await leg.attach(link);
    if (this.#call.snapshot().on_hold) leg.hold();
  }

  hold(): CallCommandFailure | null {
    if (this.#call.isEnded) return { error: 'call_not_active' };
    if (this.#transfer?.bridged) this.#transfer.hold();
    else this.#leg?.hold();
    this.#call.setHold(true);
    return null;
  }

  unhold(): CallCommandFailure | null {
    if (this.#call.isEnded) return { error: 'call_not_active' };
    if (this.#transfer?.bridged) this.#transfer.unhold();
    else this.#leg?.unhold();
    this.#call.setHold(false);
    return null;
  }

  transfer(to: string): CallCommandFailure | null {
    if (this.#call.isEnded) return { error: 'call_not_active' };
    if (this.#transfer?.active) return { error: 'call_not_active' };
    this.#transfer = new Transfer(this.#ctx, this.#call, this.#remote, this.#carrier, {
      releaseAgent: () => this.#releaseAgent(),
      recorder: this.#recorder,
      end: (reason, byeRemote) => this.end(reason, byeRemote),
    });
    this.#transfer.start(to);
    return null;
  }

  session(): Record<string, unknown> {
    return {
      remote: this.#remote.describe(),
      agent: this.#leg ? { connected: this.#link !== null, ...this.#leg.stats() } : { connected: false },
      transfer: this.#transfer?.describe() ?? null,
      recording: this.#recorder ? { paused: this.#recorder.isPaused } : null,
    };
  }

  /**
   * Ends the call once: records the reason, sends BYE to the remote party when asked (not when the
   * remote party ended it), closes the agent and every leg, finishes the recording.
   */
  end(reason: EndReason, byeRemote: boolean): Promise<void> {
    this.#ending ??= (async () => {
      this.#call.end(reason);
      this.#releaseAgent(reason.reason === 'completed' ? 'call ended' : reason.reason);
      this.#transfer?.close();
      if (byeRemote && !this.#remote.dialog.isEnded) await this.#remote.dialog.bye().catch(() => 0);
      this.#remote.close();
      await this.#closeRecorder();
    })();
    return this.#ending;
  }

  #agentClosed(info: AgentLinkClose): void {
    this.#link = null;
    // A close we asked for (hang-up, transfer) is not the agent hanging up.
    if (info.by === 'gateway' || this.#call.isEnded || this.#transfer?.releasedAgent) return;
    const reason: EndReason = info.by === 'error'
      ? { reason: 'agent_error', sipStatus: null, hangupBy: 'agent' }
      : { reason: 'completed', sipStatus: null, hangupBy: 'agent' };
    void this.end(reason, true);
  }

  /** Stops the agent side; the remote leg's RTP stays open for a transfer bridge. */
  #releaseAgent(reason = 'transferred'): void {
    const link = this.#link;
    this.#link = null;
    this.#leg?.detach();
    link?.close(reason);
  }

  async #openRecorder(): Promise<StereoWavRecorder | null> {
    const { tenant_id: tenant, id } = this.#call.snapshot();
    const relative = recordingPathOf({ tenant_id: tenant, id });
    try {
      await mkdir(join(this.#ctx.dataDir, 'recordings', tenant), { recursive: true });
      const recorder = await StereoWavRecorder.open({ path: join(this.#ctx.dataDir, relative), clock: this.#ctx.clock });
      this.#call.log.info({ path: relative }, 'recording');
      this.#relativeRecordingPath = relative;
      return recorder;
    } catch (err) {
      // A call is worth more than its recording: go on without one, and say so.
      this.#call.log.error({ err }, 'cannot open the recording; the call goes on unrecorded');
      return null;
    }
  }

  #relativeRecordingPath = '';

  async #closeRecorder(): Promise<void> {
    const recorder = this.#recorder;
    this.#recorder = null;
    if (!recorder) return;
    try {
      await recorder.close();
      this.#call.setRecordingPath(this.#relativeRecordingPath);
    } catch (err) {
      this.#call.log.error({ err }, 'cannot finish the recording');
    }
  }
}
