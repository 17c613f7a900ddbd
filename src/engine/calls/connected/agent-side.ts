/**
 * @module The agent's half of an answered call, whatever reaches it: a streaming session joined to
 * the remote leg's RTP (websocket agents and media_bridge), or a second SIP leg bridged to it
 * (sip_trunk). The connected call holds, releases and describes it without knowing which.
 */
import { AgentMediaLeg } from './agent-media/agent-media-leg.js';
import type { NegotiatedAudio } from '../../media/index.js';
import type { Call } from '../call.js';
import type { EndReason } from '../ending/end-reason.js';
import type { Clock } from '../../../common/clock.js';
import type { AudioSource } from '../../media/index.js';
import type { AgentConnector, AgentLink, AgentLinkClose, AgentTarget } from '../ports.js';
import type { RecordingPort } from './recording-port.js';
import type { RemoteLeg } from './remote-leg.js';
import { DigitsByInfo } from './digits-by-info.js';
import { agentHeaders } from '../setup/carried-headers.js';
import { CallAmd } from './agent-media/call-amd.js';
import type { AmdDecision, AmdThresholds } from '../../media/index.js';
import { AmdHold, type BeepWait } from './agent-media/amd-hold.js';
import type { AgentSideSnapshot, StreamAgentSnapshot } from '../session-snapshot.js';
import type { TransferPolicy } from './transfer-policy.js';
import type { AgentAsks } from './agent-transfer.js';
import type { TenantId } from '../../../common/ids.js';
import { agentStreamQuality, type CallQuality } from '../quality/call-quality.js';

export interface AgentSide {
  /** Connects; rejects when the agent cannot be reached (the call then ends `agent_unreachable`). */
  start(): Promise<void>;
  hold(): void;
  unhold(): void;
  /** The remote party put the call on hold itself (RFC 3264 §8.4), or took it off. */
  remoteHold(held: boolean): void;
  /** The remote leg moved to another codec (a re-offer): the media follows it. */
  updateAudio(audio: NegotiatedAudio): void;
  /** A key the remote party pressed, signalled out of band (SIP INFO); RFC 4733 digits arrive with the media. */
  receiveDigit(digit: string): void;
  /** The transfers the agent may ask for (transfer-policy.ts); null when the agent has no policy of its own (the tenant's default applies). */
  transferPolicy(): Promise<TransferPolicy | null>;
  /** Digits toward the remote party (docs/API.md "Digits toward the callee"), after those asked for before. */
  sendDigits(digits: string): void;
  /** Ends the agent's part (socket closed, SIP leg hung up) and leaves the remote leg's RTP free. */
  release(reason: string): void;
  describe(): AgentSideSnapshot;
  /** The agent side's part of the call quality (docs/API.md "Call quality"), read before {@link release}. */
  quality?(): CallQuality;
}

/** How an agent side reports that the agent ended the call on its own. */
export type AgentEnded = (reason: EndReason) => void;

/** A transcript turn as stored (docs/API.md "Calls"). */
export interface TranscriptTurn {
  role: 'caller' | 'agent';
  text: string;
  offset_s: number;
}

/** What a streaming agent side uses. */
export interface AgentSideDeps {
  clock: Clock;
  connectAgent: AgentConnector;
  /** The source played to a held party, or null for silence. A new source per hold. */
  holdMusic(): AudioSource | null;
  /** Answering-machine detection thresholds (`amd.*`, docs/CONFIGURATION.md); the detector's defaults when absent. */
  amd?: Partial<AmdThresholds>;
  /** `hold_until_result` with `wait_for_beep`: how long a machine is listened to; {@link DEFAULT_BEEP_WAIT} when absent. */
  beepWait?: BeepWait;
  /** An imported agent's own `transfer_policy`, read when the agent asks; null when it has none. */
  transferPolicyOf?(tenantId: TenantId, agentId: string): Promise<TransferPolicy | null>;
}

/** The defaults of `amd.greeting_end_silence_ms` and `amd.max_beep_wait_ms`. */
export const DEFAULT_BEEP_WAIT: Readonly<BeepWait> = { greetingEndSilenceMs: 1500, maxBeepWaitMs: 20_000 };

/** docs/API.md "Agent WebSocket protocol": the stable `code` of a `transfer_refused` event, by the status the screen gave. */
const REFUSAL_CODES: Readonly<Record<number, string>> = { 400: 'invalid_target', 403: 'not_allowed' };

/** A streaming agent (docs/API.md "Agent WebSocket protocol", or a provider's protocol) on the remote leg's RTP. */
export class StreamingAgentSide implements AgentSide {
  readonly #deps: AgentSideDeps;
  readonly #call: Call;
  readonly #leg: AgentMediaLeg;
  readonly #target: AgentTarget;
  readonly #ended: AgentEnded;
  readonly #turns: TranscriptTurn[] = [];
  readonly #answeredAt: number;
  #link: AgentLink | null = null;
  #released = false;
  readonly #asks: AgentAsks;
  /** Digits go by SIP INFO on the remote dialog where the carrier is configured for it (`dtmf: info`). */
  readonly #byInfo: DigitsByInfo | null;
  /** Answering-machine detection, for calls placed with `machine_detection: async` (or `hold_until_result`, once connected). */
  #amd: CallAmd | null = null;
  /** `hold_until_result`: the detection the agent waits for; null once it ended. */
  #hold: AmdHold | null = null;
  #heldDecisionSent = false;
  readonly #remote: RemoteLeg;

  constructor(
    deps: AgentSideDeps, call: Call, remote: RemoteLeg, target: AgentTarget, recorder: RecordingPort | null, ended: AgentEnded,
    asks: AgentAsks, dtmf: 'auto' | 'info' = 'auto',
  ) {
    this.#deps = deps;
    this.#remote = remote;
    this.#asks = asks;
    this.#byInfo = dtmf === 'info' ? new DigitsByInfo(deps.clock, remote.dialog, call.log) : null;
    this.#call = call;
    this.#target = target;
    this.#ended = ended;
    this.#answeredAt = deps.clock.now();
    this.#leg = new AgentMediaLeg({
      clock: deps.clock, rtp: remote.rtp, audio: remote.audio, recorder, holdMusic: deps.holdMusic(),
      onDigit: (digit) => {
        call.log.debug({ digit }, 'DTMF from the remote party');
        call.pressed(digit);
      },
      onCallerSpeech: (event) => call.log.debug({ event }, 'caller speech'),
      onRemoteAudio: (pcm) => this.#amd?.write(pcm),
    });
  }

  /** An imported agent's own policy; a bare `agent_ws_url` has none (the tenant's default applies). */
  async transferPolicy(): Promise<TransferPolicy | null> {
    const target = this.#target;
    return target.kind === 'imported' ? await this.#deps.transferPolicyOf?.(this.#call.snapshot().tenant_id, target.agentId) ?? null : null;
  }

  /** Final transcript turns the agent's platform reported, in order. */
  get turns(): readonly TranscriptTurn[] {
    return this.#turns;
  }

  async start(): Promise<void> {
    if (this.#call.machineDetection === 'async') void this.#startAmd();
    const held = this.#call.machineDetection === 'hold_until_result' ? await this.#holdUntilResult() : null;
    if (held === 'released') return;
    const record = this.#call.snapshot();
    const link = await this.#deps.connectAgent({
      call: {
        callId: record.id, callControlId: record.call_control_id, from: record.from_number, to: record.to_number, direction: record.direction,
        ...(record.direction === 'inbound' ? { verification: { verstat: record.caller_verstat, identityHeader: record.caller_identity_header } } : {}),
        ...agentHeaders(record),
        ...(Object.keys(this.#call.customParameters).length > 0 ? { customParameters: this.#call.customParameters } : {}),
      },
      tenantId: record.tenant_id,
      agent: this.#target,
      handlers: {
        ...this.#leg.handlers,
        onConversationId: (id) => this.#call.setConversationId(id),
        onTranscript: (t) => {
          if (t.final && t.text.trim() !== '') this.#turns.push({ role: t.role, text: t.text, offset_s: (this.#deps.clock.now() - this.#answeredAt) / 1000 });
        },
        onClose: (info) => this.#closed(info),
        onSendDigits: (digits) => this.#send(digits, () => this.#link?.notify?.('dtmf_sent', { dtmf_sent: { digits } })),
        onTransfer: (to) => void this.#askTransfer(to).catch((err: Error) => {
          // The policy could not be read (storage unavailable): nothing was started.
          this.#call.log.warn({ err: err.message, to }, 'agent transfer not screened');
          this.#link?.notify?.('transfer_failed', { transfer_failed: { to, sip_status: 500, reason: 'Server Internal Error' } });
        }),
        // docs/API.md "Agent WebSocket protocol": `hangup` ends the call as the agent's, like closing its socket.
        onHangup: () => {
          if (!this.#released) this.#ended({ reason: 'completed', sipStatus: null, hangupBy: 'agent' });
        },
      },
    });
    this.#link = link;
    const dialling = this.#deps.clock.monotonic();
    try {
      await link.start();
    } catch (err) {
      this.#link = null;
      throw err;
    }
    this.#call.log.info({ agent: this.#target.kind, connect_ms: Math.round(this.#deps.clock.monotonic() - dialling) }, 'agent connected');
    if (this.#released) {
      link.close('call ended');
      return;
    }
    // An imported agent's connection is its platform's conversation id on the record instead.
    if (this.#target.kind === 'websocket') this.#call.agentConnected();
    await this.#leg.attach(link);
    if (held && !this.#released) {
      this.#link?.notify?.('amd', amdEvent(held));
      this.#heldDecisionSent = true;
    }
  }

  /**
   * docs/API.md "Answering-machine detection", `hold_until_result`: no agent until the detector
   * decided. A machine hung up ends the call `machine_detected` (hangup_by `gateway`); otherwise
   * the decision to send the agent once it is connected. `released` when the call went meanwhile.
   */
  async #holdUntilResult(): Promise<AmdDecision | 'released'> {
    const hold = new AmdHold({
      clock: this.#deps.clock, rtp: this.#remote.rtp, audio: this.#remote.audio, thresholds: this.#deps.amd ?? {},
      beepWait: this.#deps.beepWait ?? DEFAULT_BEEP_WAIT, onMachine: this.#call.onMachine,
      onResult: (d) => {
        this.#call.setAmd(d);
        this.#call.log.info({ amd: d.result, decided_after_ms: d.decidedAfterMs, beep_at_ms: d.beepAtMs }, 'answering-machine detection');
        // A beep after the agent got the decision; before that the decision it gets has it.
        if (this.#heldDecisionSent) this.#link?.notify?.('amd', amdEvent(d));
      },
    });
    this.#hold = hold;
    try {
      await hold.start();
    } catch (err) {
      // Without a detector nothing can be held back on: the agent is connected, as for `unknown`.
      this.#call.log.warn({ err }, 'answering-machine detection could not start');
      this.#hold = null;
      return { result: 'unknown', decidedAfterMs: 0, beepAtMs: null };
    }
    const outcome = await hold.outcome;
    this.#hold = null;
    if (outcome.action === 'released' || this.#released) {
      hold.takeDetector()?.close();
      return 'released';
    }
    if (outcome.action === 'hangup') {
      this.#ended({ reason: 'machine_detected', sipStatus: null, hangupBy: 'gateway' });
      return 'released';
    }
    this.#amd = hold.takeDetector();
    return outcome.decision;
  }

  hold(): void {
    this.#leg.hold();
  }

  /**
   * docs/API.md "Transfers asked by the agent": a `transfer` event is screened as a REFER is; a
   * refusal leaves the call as it was and tells the agent (`transfer_refused`), a target that
   * could not be reached tells it too (`transfer_failed`). Once the target answers, the agent is
   * released (its socket gets `stop`).
   */
  async #askTransfer(to: string): Promise<void> {
    if (this.#released) return;
    const refused = await this.#asks.screenTransfer(to);
    if (refused !== null) {
      this.#link?.notify?.('transfer_refused', { transfer_refused: { to, code: REFUSAL_CODES[refused] ?? 'not_allowed' } });
      return;
    }
    await this.#asks.transfer(to, (status, reason) => {
      if (status >= 300) this.#link?.notify?.('transfer_failed', { transfer_failed: { to, sip_status: status, reason } });
    });
  }

  /** docs/API.md "Answering-machine detection": the result on the call and to the agent; a beep heard later is sent again with it. */
  async #startAmd(): Promise<void> {
    const report = (d: AmdDecision) => {
      this.#call.setAmd(d);
      this.#call.log.info({ amd: d.result, decided_after_ms: d.decidedAfterMs, beep_at_ms: d.beepAtMs }, 'answering-machine detection');
      this.#link?.notify?.('amd', amdEvent(d));
    };
    try {
      const amd = await CallAmd.start(this.#deps.amd ?? {}, report, report);
      if (this.#released) amd.close();
      else this.#amd = amd;
    } catch (err) {
      this.#call.log.warn({ err }, 'answering-machine detection could not start');
    }
  }

  receiveDigit(digit: string): void {
    this.#leg.receiveDigit(digit);
  }

  unhold(): void {
    this.#leg.unhold();
  }

  sendDigits(digits: string): void {
    this.#send(digits, () => this.#call.log.debug({ digits }, 'digits sent to the remote party'));
  }

  #send(digits: string, onSent: () => void): void {
    if (this.#released) return;
    if (this.#byInfo) this.#byInfo.send(digits, onSent);
    else this.#leg.sendDigits(digits, onSent);
  }

  remoteHold(held: boolean): void {
    if (held) this.#leg.hold('remote');
    else this.#leg.unhold('remote');
  }

  updateAudio(audio: NegotiatedAudio): void {
    this.#leg.setAudio(audio);
  }

  release(reason: string): void {
    if (this.#released) return;
    this.#released = true;
    this.#byInfo?.stop();
    this.#hold?.cancel();
    this.#amd?.close();
    this.#amd = null;
    this.#call.log.info({ reason }, 'agent released');
    const link = this.#link;
    this.#link = null;
    // close, not only detach: the leg's WASM detector and resamplers are freed with it.
    this.#leg.close();
    link?.close(reason);
  }

  describe(): StreamAgentSnapshot {
    return { kind: 'stream', connected: this.#link !== null, ...this.#leg.stats() };
  }

  /** The agent's audio counters; its RTP leg is the carrier's, which the call counts itself. */
  quality(): CallQuality {
    return { legs: [], agent_stream: agentStreamQuality(this.#leg.stats()) };
  }

  #closed(info: AgentLinkClose): void {
    this.#link = null;
    // A close we asked for (hang-up, transfer) is not the agent hanging up.
    if (info.by === 'gateway' || this.#released) return;
    this.#ended(info.by === 'error'
      ? { reason: 'agent_error', sipStatus: null, hangupBy: 'agent' }
      : { reason: 'completed', sipStatus: null, hangupBy: 'agent' });
  }
}

/** The agent's `amd` extension event (docs/API.md "Agent WebSocket protocol"). */
const amdEvent = (d: AmdDecision) => ({ amd: { result: d.result, decided_after_ms: d.decidedAfterMs, beep_at_ms: d.beepAtMs } });
