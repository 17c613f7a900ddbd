/**
 * @module What the control API needs from layers it may not import (providers) and from the
 * system (name resolution): declared here, satisfied structurally, wired in main.
 */

export type PlatformVerifyResult =
  | { outcome: 'found'; name?: string }
  | { outcome: 'not_found' }
  | { outcome: 'bad_credentials' }
  | { outcome: 'unavailable'; reason: string }
  | { outcome: 'not_supported' };

/** One voice-agent platform as the inventory sees it. */
export interface AgentPlatform {
  readonly connectionModes: readonly string[];
  readonly regions: readonly string[];
  readonly defaultRegion: string;
  readonly defaultSipTransport: 'udp' | 'tcp' | 'tls';
  /** The region's endpoints: `sipHost` tells whether the platform has a SIP edge to default to. */
  endpoints(region: string): { sipHost?: string; wsBaseUrl?: string; apiBaseUrl?: string };
  defaultStreamingUrl(region: string, externalAgentId: string): string | null;
  verify(input: { externalAgentId: string; apiKey: string; region: string }): Promise<PlatformVerifyResult>;
}

export interface AgentPlatforms {
  get(name: string): AgentPlatform | undefined;
  names(): readonly string[];
}

/**
 * Resolves a host name to every address it has (A and AAAA); rejects when the name does not
 * resolve. The outbound-address policy's type: the policy's DNS resolver in production, injected by
 * tests so they need no DNS.
 */
export type { HostResolver } from '../common/outbound-policy.js';

/**
 * RFC 3263 location of a SIP URI, as the engine will do it when it dials: the URI's host and
 * every address its targets resolve to (NAPTR, SRV, then A/AAAA; none when nothing resolves yet),
 * or `invalid` when the URI does not parse. Wired to the SIP layer's resolver in main.
 */
export type SipUriLocator = (uri: string) => Promise<{ host: string; addresses: string[] } | { invalid: string }>;
