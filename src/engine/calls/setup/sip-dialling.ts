/**
 * @module What placing an outbound SIP leg needs (a call to a carrier, a transfer's new leg, a
 * sip_trunk agent edge): the user agent, the RFC 3263 locator, our From host and the ring time-out.
 */
import type { ServerLocator, SipUserAgent } from '../../sip/index.js';

export interface SipDialling {
  ua: SipUserAgent;
  locator: ServerLocator;
  /** Host of our From URIs on outbound INVITEs. */
  sipHost: string;
  /** Ring time-out of outbound attempts: CANCEL after it. */
  ringTimeoutMs: number;
}
