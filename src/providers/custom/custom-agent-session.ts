/**
 * @module Provider `custom` in media_bridge (and POST /v1/calls `agent_ws_url`): the gateway is
 * the WebSocket client and speaks the Twilio Media Streams message set (docs/API.md "Agent WebSocket protocol";
 * https://www.twilio.com/docs/voice/media-streams/websocket-messages), plus `hold`/`unhold`.
 */
import { randomBytes } from 'node:crypto';
import { MULAW_8000, type AgentSessionOptions, type AudioFormat, type HoldSource } from '../agent-session.js';
import { SocketAgentSession } from '../socket-agent-session.js';
import { recordField, stringField } from '../wire-json.js';

/** DTMF digits a Twilio `dtmf` event may carry (RFC 4733 §3.2 events 0-15). */
const DTMF_DIGITS = /^[0-9*#A-D]$/;
/** What an agent's `dtmf` may ask for (docs/API.md "Digits toward the callee"): keys and `w` pauses, 1 to 64. */
const CALLEE_DIGITS = /^[0-9A-Da-d*#wW]{1,64}$/;

/** Longest `to` a `transfer` event may name (a SIP URI of a transfer policy's size). */
const TRANSFER_TARGET_MAX = 512;

/** A Twilio-style stream id: "MZ" and 32 hex digits. */
function newStreamSid(): string {
  return `MZ${randomBytes(16).toString('hex')}`;
}

/** The custom agent session. The agent closing its socket hangs up the call. */
export class CustomAgentSession extends SocketAgentSession {
  readonly inputFormat: AudioFormat = MULAW_8000;
  readonly outputFormat: AudioFormat = MULAW_8000;
  readonly streamSid = newStreamSid();
  #sequence = 0;
  #chunk = 0;
  #startedAt = 0;

  constructor(options: AgentSessionOptions) {
    super('custom', options);
  }

  protected connect(): Promise<void> {
    this.openSocket(this.options.endpoint.url);
    return Promise.resolve();
  }

  protected onOpen(): void {
    const { call } = this.options;
    this.#startedAt = this.options.clock.monotonic();
    this.#send('connected', { protocol: 'Call', version: '1.0.0' }, false);
    this.#send('start', {
      start: {
        streamSid: this.streamSid,
        callSid: call.callId,
        tracks: ['inbound'],
        customParameters: {
          // The tenant's own first, so they cannot stand in for the gateway's (docs/DECISIONS.md "Headers and parameters carried to agents").
          ...call.customParameters,
          call_id: call.callId,
          call_control_id: call.callControlId,
          from: call.from,
          to: call.to,
          direction: call.direction,
          // Inbound only (docs/API.md "Caller verification"); values are strings, as Twilio's are.
          ...(call.verification ? { verstat: call.verification.verstat ?? '', identity_header: String(call.verification.identityHeader) } : {}),
          ...(call.sipHeaders ? { sip_headers: call.sipHeaders } : {}),
        },
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
      },
    });
    // The protocol has no answer to `start`: the agent is ready once it has it.
    this.ready();
  }

  protected onMessage(message: Record<string, unknown>): void {
    const event = stringField(message, 'event');
    switch (event) {
      case 'media': {
        const payload = stringField(recordField(message, 'media'), 'payload');
        if (payload === undefined) this.log('warn', 'media event without payload; ignored');
        else this.handlers.onAudio?.(Buffer.from(payload, 'base64'));
        return;
      }
      case 'mark': {
        const name = stringField(recordField(message, 'mark'), 'name');
        if (name !== undefined) this.handlers.onMark?.(name);
        return;
      }
      case 'clear':
        this.handlers.onClearAudio?.();
        return;
      case 'dtmf': {
        // docs/API.md "Digits toward the callee": keys, `w` pauses, at most 64.
        const digits = stringField(message, 'digits');
        if (digits !== undefined && CALLEE_DIGITS.test(digits)) this.handlers.onSendDigits?.(digits);
        else this.log('warn', 'dtmf event without valid digits; ignored');
        return;
      }
      case 'transfer': {
        // docs/API.md "Transfers asked by the agent": screened by the call against the policy.
        // A missing or oversized `to` is still a transfer asked for: it is refused, and the agent told.
        const to = stringField(message, 'to');
        this.handlers.onTransfer?.(to !== undefined && to.length <= TRANSFER_TARGET_MAX ? to : '');
        return;
      }
      case 'hangup':
        this.handlers.onHangup?.();
        return;
      default:
        this.log('debug', 'unexpected event ignored', { event: event ?? '(none)' });
    }
  }

  /**
   * The `media` event of {@link #send}, written out: fifty a second per call, and every field is
   * a number, the stream id (hex) or base64, none of which JSON escapes. Same text as
   * JSON.stringify would give (custom-agent-session.test.ts holds them equal).
   */
  protected writeAudio(frame: Buffer): void {
    this.#chunk += 1;
    this.#sequence += 1;
    const timestamp = Math.max(0, Math.round(this.options.clock.monotonic() - this.#startedAt));
    this.sendRaw(
      `{"event":"media","sequenceNumber":"${this.#sequence}","streamSid":"${this.streamSid}","media":{"track":"inbound",`
      + `"chunk":"${this.#chunk}","timestamp":"${timestamp}","payload":"${frame.toString('base64')}"}}`,
    );
  }

  override sendDtmf(digit: string): boolean {
    if (this.state !== 'ready' || !DTMF_DIGITS.test(digit)) return false;
    return this.#send('dtmf', { dtmf: { track: 'inbound_track', digit } });
  }

  /** Extension events (docs/API.md "Agent WebSocket protocol"): `dtmf_sent`, `amd`, `transfer_refused`. */
  notify(event: string, body: Record<string, unknown>): void {
    if (this.state === 'ready') this.#send(event, body);
  }

  /** Echoes the agent's mark: the audio queued before it has played (Twilio `mark`). */
  override markPlayed(name: string): void {
    if (this.state === 'ready') this.#send('mark', { mark: { name } });
  }

  /** Extension events (docs/API.md "Agent WebSocket protocol"): `source` is `api` (POST /v1/calls/{id}/hold) or `remote` (the remote party's own hold, RFC 3264 §8.4). */
  protected override onHoldChange(held: boolean, source: HoldSource): void {
    this.#send(held ? 'hold' : 'unhold', { source });
  }

  protected override beforeClose(): void {
    const { callId } = this.options.call;
    this.#send('stop', { stop: { accountSid: '', callSid: callId } });
  }

  /** Twilio numbers every message after `connected`; sequenceNumber is a string. */
  #send(event: string, body: Record<string, unknown>, numbered = true): boolean {
    if (!numbered) return this.sendJson({ event, ...body });
    this.#sequence += 1;
    return this.sendJson({ event, sequenceNumber: String(this.#sequence), streamSid: this.streamSid, ...body });
  }
}

/** The `custom` session factory. */
export function openCustomAgentSession(options: AgentSessionOptions): CustomAgentSession {
  return new CustomAgentSession(options);
}
