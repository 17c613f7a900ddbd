/**
 * @module Ultravox: agent lookup and per-call server WebSocket.
 * Vendor reference: https://docs.ultravox.ai/api-reference/agents/agents-get and
 * https://docs.ultravox.ai/apps/websockets
 */
import { agentPathSegment, createPlatformAdapter, type AdapterOptions, type PlatformSpec } from '../http-adapter.js';
import { stringMember } from '../http-verify.js';
import type { ProviderAdapter } from '../provider-adapter.js';

/**
 * One public API. The SIP domain is specific to each Ultravox account, so there is no public SIP
 * edge: a tenant using sip_trunk gives `sip_uri` (`sip:agent_<id>@<account>.sip.ultravox.ai`).
 */
export const ULTRAVOX_REGIONS = {
  default: { apiBaseUrl: 'https://api.ultravox.ai' },
} as const;

const spec: PlatformSpec = {
  name: 'ultravox',
  connectionModes: ['sip_trunk', 'media_bridge'],
  regions: ULTRAVOX_REGIONS,
  defaultRegion: 'default',
  // RFC 3261 §18: UDP is the transport every SIP element implements; Ultravox documents none.
  defaultSipTransport: 'udp',
  sipUri: () => null,
  // `POST /api/agents/{id}/calls` with medium `serverWebSocket` answers the call's `joinUrl`.
  streamingUrl(endpoints, externalAgentId) {
    const segment = agentPathSegment(externalAgentId);
    if (segment === null || !endpoints.apiBaseUrl) return null;
    return `${endpoints.apiBaseUrl}/api/agents/${segment}/calls`;
  },
  verifyRequest(endpoints, externalAgentId, apiKey) {
    const segment = agentPathSegment(externalAgentId);
    if (segment === null || !endpoints.apiBaseUrl) return null;
    return { url: `${endpoints.apiBaseUrl}/api/agents/${segment}`, headers: { 'x-api-key': apiKey } };
  },
  agentName: (body) => stringMember(body, 'name'),
};

/** The Ultravox adapter: `GET {base}/api/agents/{id}` with `X-API-Key`. */
export function createUltravoxAdapter(options: AdapterOptions): ProviderAdapter {
  return createPlatformAdapter(spec, options);
}
