/**
 * @module Retell AI: SIP-only platform (its audio WebSocket ended on 2025-01-01), agent lookup.
 * Vendor reference: https://docs.retellai.com/api-references/get-agent and
 * https://docs.retellai.com/deploy/custom-telephony
 */
import { agentPathSegment, createPlatformAdapter, type AdapterOptions, type PlatformSpec } from '../http-adapter.js';
import { stringMember } from '../http-verify.js';
import type { ProviderAdapter } from '../provider-adapter.js';
import { buildSipUri } from '../sip-uri.js';

/** Retell documents one public API and one SIP edge. */
export const RETELL_REGIONS = {
  default: { apiBaseUrl: 'https://api.retellai.com', sipHost: 'sip.retellai.com' },
} as const;

const spec: PlatformSpec = {
  name: 'retell',
  // No media_bridge: telephony reaches Retell over SIP only.
  connectionModes: ['sip_trunk'],
  regions: RETELL_REGIONS,
  defaultRegion: 'default',
  // Retell recommends TCP.
  defaultSipTransport: 'tcp',
  sipUri(endpoints, { didNumber, transport }) {
    // Elastic-trunk numbers are routed on the number imported into Retell.
    if (!endpoints.sipHost || !didNumber) return null;
    return buildSipUri({ user: didNumber, host: endpoints.sipHost, transport });
  },
  streamingUrl: () => null,
  verifyRequest(endpoints, externalAgentId, apiKey) {
    const segment = agentPathSegment(externalAgentId);
    if (segment === null || !endpoints.apiBaseUrl) return null;
    return { url: `${endpoints.apiBaseUrl}/get-agent/${segment}`, headers: { authorization: `Bearer ${apiKey}` } };
  },
  agentName: (body) => stringMember(body, 'agent_name'),
};

/** The Retell adapter: `GET {base}/get-agent/{id}` with a Bearer key. */
export function createRetellAdapter(options: AdapterOptions): ProviderAdapter {
  return createPlatformAdapter(spec, options);
}
