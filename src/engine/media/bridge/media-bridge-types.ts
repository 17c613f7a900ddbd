/**
 * @module The public types of a MediaBridge (media-bridge.ts): leg and tap names, the delegate,
 * options and per-leg statistics. Apart from the bridge so that media-bridge.ts holds the relay
 * itself; it re-exports them.
 */
import type { AudioFrame } from '../pipeline/audio-frame.js';
import type { RtpSessionStats } from '../rtp/rtp-session.js';
import type { Clock } from '../../../common/clock.js';
import type { BridgeLegConfig } from './bridge-leg.js';

/** `a` is the caller (carrier) side, `b` the callee (agent) side. */
export type LegName = 'a' | 'b';
/** Audio received from a leg's far end, or audio sent to it. */
export type TapDirection = 'received' | 'sent';
/** Receives decoded 8 kHz frames; `frame.pcm` is reused after the call returns (copy to keep). */
export type AudioTap = (frame: AudioFrame) => void;

/**
 * Events of a bridge; optional methods. The media time-out is not one: it belongs to whoever
 * ends the call, through `RtpSession.watchMedia` (docs/ARCHITECTURE.md "Media ownership").
 */
export interface MediaBridgeDelegate {
  onDtmf?(leg: LegName, digit: string, via: 'rfc4733' | 'inband'): void;
}

/** Options of a MediaBridge. */
export interface MediaBridgeOptions {
  clock: Clock;
  a: BridgeLegConfig;
  b: BridgeLegConfig;
  delegate?: MediaBridgeDelegate;
}

/** Per-leg numbers: the session's plus what the bridge dropped. */
export interface BridgeLegStats extends RtpSessionStats {
  /** Packets with a payload type we did not negotiate, a malformed header, or a payload beyond MAX_PAYLOAD (media-bridge.ts). */
  packetsDropped: number;
  digitsReceived: number;
}
