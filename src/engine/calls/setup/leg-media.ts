/**
 * @module The media side of a new leg: where our SDP says media goes, and opening the leg's RTP
 * session from the port pool. The composition root builds one {@link LegMedia}; the classes that
 * open legs (the call service, a transfer, a sip_trunk agent edge) get it and nothing else of RTP.
 */
import type { Clock } from '../../../common/clock.js';
import { isPortsExhausted, RtpSession, type PortPool, type RtpRefusalCounter } from '../../media/index.js';
import type { CarrierProfile } from './carrier-profile.js';

export interface LegMedia {
  /** Address advertised in SDP (c=) for our media. */
  readonly address: string;
  /**
   * Opens an RTP session for a new leg, or null when the port range is exhausted. A carrier leg
   * may also learn media sources in the carrier's `media_networks` (docs/SECURITY.md "Media sources").
   */
  open(carrier?: Pick<CarrierProfile, 'mediaNetworks'>): Promise<RtpSession | null>;
}

export interface LegMediaOptions {
  clock: Clock;
  ports: PortPool;
  /** Local address RTP sockets bind to. */
  bindAddress: string;
  /** Address advertised in SDP (c=) for our media. */
  address: string;
  /** No RTP from the remote party for this long ends the call (`media_timeout`); 0 disables. */
  mediaTimeoutMs: number;
  /** `rtp.strict_source` (docs/SECURITY.md "Media sources"); strict when absent. */
  strictSource?: boolean;
  /** Where refused media datagrams are counted. */
  refusals?: RtpRefusalCounter;
}

export function legMedia(o: LegMediaOptions): LegMedia {
  return {
    address: o.address,
    async open(carrier) {
      const session = await RtpSession.open({
        clock: o.clock, ports: o.ports, bindAddress: o.bindAddress, mediaTimeoutMs: o.mediaTimeoutMs,
        strictSource: o.strictSource ?? true, refusals: o.refusals, mediaNetworks: carrier?.mediaNetworks,
      });
      return isPortsExhausted(session) ? null : session;
    },
  };
}

/** A random o= session id (RFC 4566 5.2 suggests an NTP timestamp; any unique number will do). */
export const newSdpSessionId = (): number => Math.floor(Math.random() * 2 ** 31);
