/**
 * @module The contract every voice-agent provider adapter implements (docs/API.md "Agents, routes, numbers and SIP credentials"). The
 * providers themselves are listed in one place only: the registry (`registry.ts`).
 */

/**
 * How a call reaches the agent. `sip_trunk`: the gateway dials the platform's SIP edge.
 * `media_bridge`: the gateway bridges call audio to the platform's streaming protocol.
 */
export const CONNECTION_MODES = ['sip_trunk', 'media_bridge'] as const;
export type ConnectionMode = (typeof CONNECTION_MODES)[number];

/** SIP transports (RFC 3261 §18); `tls` means SIP over TLS on port 5061 (RFC 3261 §26.2). */
export const SIP_TRANSPORTS = ['udp', 'tcp', 'tls'] as const;
export type SipTransport = (typeof SIP_TRANSPORTS)[number];

/** The addresses of one provider region, after configuration overrides. */
export interface ProviderEndpoints {
  /** HTTPS base of the platform's REST API, without a trailing slash. */
  apiBaseUrl?: string;
  /** WebSocket base of the platform's streaming API, without a trailing slash. */
  wsBaseUrl?: string;
  /** Host (optionally `host:port`) of the platform's SIP edge. */
  sipHost?: string;
}

/** Inputs of {@link ProviderAdapter.defaultSipUri}. */
export interface SipUriOptions {
  /** The E.164 number the call was placed to; the user part most platforms route on. */
  didNumber?: string;
  externalAgentId: string;
  /** Transport to write into the URI; the provider's default when absent. */
  transport?: SipTransport;
}

/** Inputs of {@link ProviderAdapter.verify}. The key is used for this one request, never kept. */
export interface VerifyInput {
  externalAgentId: string;
  apiKey: string;
  region: string;
}

/**
 * What a live check of an agent found. These are outcomes, not errors: the control API maps them
 * to 200 / 404 `agent_not_found_on_platform` / 400 `provider_credentials_invalid` / 502
 * `provider_unavailable`. `not_supported` means the provider has no platform API, so nothing was
 * checked (provider `custom`); the agent is then stored unverified.
 */
export type VerifyResult =
  | { outcome: 'found'; name?: string }
  | { outcome: 'not_found' }
  | { outcome: 'bad_credentials' }
  | { outcome: 'unavailable'; reason: string }
  | { outcome: 'not_supported' };

export type VerifyOutcome = VerifyResult['outcome'];

/**
 * One voice-agent platform: where it lives, how calls reach it, and how to check that an agent
 * exists. Adapters hold no tenant state; keys are passed in per call and never logged.
 */
export interface ProviderAdapter {
  /** The vendor's name (`VendorDescriptor.name`). */
  readonly name: string;
  /**
   * Modes the platform offers (Retell offers only `sip_trunk`). The import default is
   * `sip_trunk` whatever the provider, so every adapter offers it.
   */
  readonly connectionModes: readonly ConnectionMode[];
  /** Region names a tenant may give; each picks both the API base URL and the SIP edge. */
  readonly regions: readonly string[];
  readonly defaultRegion: string;
  /** Transport used when the tenant gives none (TCP for ElevenLabs and Retell). */
  readonly defaultSipTransport: SipTransport;
  /**
   * The addresses of `region` after configuration overrides.
   * @throws InvariantError when `region` is not one of {@link regions} (callers validate first).
   */
  endpoints(region: string): ProviderEndpoints;
  /**
   * Default SIP target for `sip_trunk` when the agent has no `sip_uri`. Null when the platform
   * has no public SIP edge, or when its edge routes on a number that was not given: the caller
   * then needs a `sip_uri`, or builds the URI at call time with the dialled number.
   */
  defaultSipUri(region: string, options: SipUriOptions): string | null;
  /**
   * Default streaming endpoint for `media_bridge` (null when the platform has none). A `wss://`
   * URL is connected to directly; an `https://` URL is the platform's call-creation endpoint whose
   * answer carries the per-call socket URL (Vapi, Ultravox).
   */
  defaultStreamingUrl(region: string, externalAgentId: string): string | null;
  /**
   * Live check that the agent exists on the account of `apiKey`. Every platform answer, time-out
   * and network failure is an outcome; it rejects only on a caller bug (an unknown region).
   */
  verify(input: VerifyInput): Promise<VerifyResult>;
}

/** Endpoint overrides from the config file key `providers.<name>` (docs/CONFIGURATION.md "Operator surface"). */
export interface EndpointOverrides {
  api_base_url?: string;
  ws_base_url?: string;
  sip_host?: string;
}
