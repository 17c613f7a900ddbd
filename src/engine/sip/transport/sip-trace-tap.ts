/**
 * @module What the transport layer tells a SIP trace (docs/API.md "SIP trace of a call"): every
 * message received and sent, with its time, transport, source and destination, as the bytes on
 * the wire. The tap is called synchronously on the SIP path: it must be cheap and never throw
 * (the transport layer catches and counts what it throws anyway).
 */
import type { SipEndpoint, TransportProtocol } from './transport.js';

export interface SipTraceEvent {
  direction: 'received' | 'sent';
  /** Wall-clock time, in ms since the epoch. */
  at: number;
  protocol: TransportProtocol;
  source: SipEndpoint;
  destination: SipEndpoint;
  /** The message as sent, or as received (serialized again from what was parsed). */
  data: Buffer;
}

export interface SipTraceTap {
  message(event: SipTraceEvent): void;
}
