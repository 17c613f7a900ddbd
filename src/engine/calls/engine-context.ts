/**
 * @module What every call flow shares: the SIP user agent, the RTP port pool and addresses, the
 * carriers, the agent connector, the store, and the timing settings.
 */
import { isPortsExhausted, RtpSession, type AudioSource, type PortPool, type RtpRefusalCounter } from '../media/index.js';
import type { OutboundAddressPolicy } from '../../common/outbound-policy.js';
import type { ServerLocator, SipRequest, SipSource, SipUserAgent } from '../sip/index.js';
import type { CallContext } from './call.js';
import type { CarrierProfile } from './setup/carrier-profile.js';
import type { AgentConnector, InboundRoute, SipTrunkResolver, SpeakerRole, SpeechRecognizer } from './ports.js';

export interface CallTimings {
  /** Ring time-out of outbound attempts: CANCEL after it. */
  ringTimeoutMs: number;
  /** No RTP from the remote party for this long ends the call (`media_timeout`); 0 disables. */
  mediaTimeoutMs: number;
}

export interface CallEngineContext extends CallContext {
  ua: SipUserAgent;
  locator: ServerLocator;
  ports: PortPool;
  /** Local address RTP sockets bind to. */
  rtpBindAddress: string;
  /** Address advertised in SDP (c=) for our media. */
  mediaAddress: string;
  /** Host of our From URIs on outbound INVITEs. */
  sipHost: string;
  carriers: ReadonlyMap<string, CarrierProfile>;
  connectAgent: AgentConnector;
  /**
   * The carrier an INVITE belongs to (`inbound.sources`, docs/CONFIGURATION.md): by its source address,
   * or the one a trusted edge proxy forwarded (docs/ARCHITECTURE.md "Trusted edge proxies").
   */
  carrierForSource(source: SipSource, request: SipRequest): CarrierProfile | undefined;
  /** The live route of a DID on a carrier, or undefined (unrouted or released). */
  routeFor(did: string, carrier: string): InboundRoute | undefined;
  resolveSipTrunk: SipTrunkResolver;
  /** The outbound-address policy of sip_trunk targets (docs/SECURITY.md, "Outbound addresses"). */
  sipTargets: OutboundAddressPolicy;
  /** Whether inbound calls are recorded (media_bridge and sip_trunk alike). */
  recordInbound: boolean;
  /** Where recordings go (`recordings/<tenant>/<call>.wav` below it). */
  dataDir: string;
  timings: CallTimings;
  /** The source played to a held party, or null for silence. A new source per hold. */
  holdMusic(): AudioSource | null;
  /** The gateway's own speech recognition of answered calls; absent or null when off. */
  transcription?: TranscriptionSettings | null;
  /** `rtp.strict_source` (strict when absent) and where refused media datagrams are counted. */
  mediaSources?: { strict: boolean; refusals?: RtpRefusalCounter };
}

/**
 * Opens an RTP session for a new leg, or null when the port range is exhausted. A carrier leg
 * may also learn media sources in the carrier's `media_networks` (docs/SECURITY.md "Media sources").
 */
export async function openLegRtp(ctx: CallEngineContext, carrier?: Pick<CarrierProfile, 'mediaNetworks'>): Promise<RtpSession | null> {
  const session = await RtpSession.open({
    clock: ctx.clock, ports: ctx.ports, bindAddress: ctx.rtpBindAddress, mediaTimeoutMs: ctx.timings.mediaTimeoutMs,
    strictSource: ctx.mediaSources?.strict ?? true, refusals: ctx.mediaSources?.refusals, mediaNetworks: carrier?.mediaNetworks,
  });
  return isPortsExhausted(session) ? null : session;
}

/** A random o= session id (RFC 4566 5.2 suggests an NTP timestamp; any unique number will do). */
export const newSdpSessionId = (): number => Math.floor(Math.random() * 2 ** 31);

/** The gateway's own transcription of answered calls (configuration `transcription`). */
export interface TranscriptionSettings {
  recognizer: SpeechRecognizer;
  /** The parties transcribed: one recognition stream each per call. */
  channels: readonly SpeakerRole[];
}
