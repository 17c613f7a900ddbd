/**
 * @module Provider `custom`: any SIP edge, or any agent speaking the gateway's WebSocket protocol
 * (docs/API.md "Agent WebSocket protocol"). There is no platform behind it, so nothing has a default.
 */
import { InvariantError } from '../../common/errors.js';
import type { EndpointOverrides, ProviderAdapter, ProviderEndpoints, VerifyResult } from '../provider-adapter.js';

const REGIONS = Object.freeze(['default']);

/**
 * The custom adapter. The tenant must give `sip_uri` (sip_trunk) or `websocket_url`
 * (media_bridge). `verify` answers `not_supported` without a network call: there is no account
 * to ask, and probing the tenant's own URL would neither prove that an agent answers there nor
 * be safe to do from an API request (it could be aimed at internal addresses). Overrides under
 * `providers.custom` are accepted and ignored, since there is nothing to point elsewhere.
 */
export function createCustomAdapter(_overrides?: EndpointOverrides): ProviderAdapter {
  const endpoints = (region: string): ProviderEndpoints => {
    if (region !== 'default') throw new InvariantError(`custom: unknown region ${JSON.stringify(region)}`);
    return Object.freeze({});
  };
  return Object.freeze({
    name: 'custom' as const,
    connectionModes: Object.freeze(['sip_trunk', 'media_bridge'] as const),
    regions: REGIONS,
    defaultRegion: 'default',
    // RFC 3261 §18: every element implements UDP, so it is the one transport any edge takes.
    defaultSipTransport: 'udp' as const,
    endpoints,
    defaultSipUri(region: string): string | null {
      endpoints(region);
      return null;
    },
    defaultStreamingUrl(region: string): string | null {
      endpoints(region);
      return null;
    },
    verify(input: { region: string }): Promise<VerifyResult> {
      endpoints(input.region);
      return Promise.resolve({ outcome: 'not_supported' });
    },
  });
}
