/**
 * @module Vapi: US and EU regions, SIP edge, WebSocket transport and assistant lookup.
 * Vendor reference: https://docs.vapi.ai/api-reference/assistants/get and
 * https://docs.vapi.ai/advanced/sip/sip-networking
 */
import { agentPathSegment, createPlatformAdapter, type AdapterOptions, type PlatformSpec } from '../http-adapter.js';
import { stringMember } from '../http-verify.js';
import type { ProviderAdapter } from '../provider-adapter.js';
import { buildSipUri } from '../sip-uri.js';

/** Keys are region-specific: an EU key answers only on the EU API. */
export const VAPI_REGIONS = {
  us: { apiBaseUrl: 'https://api.vapi.ai', sipHost: 'sip.vapi.ai' },
  eu: { apiBaseUrl: 'https://api.eu.vapi.ai', sipHost: 'sip.eu.vapi.ai' },
} as const;

const spec: PlatformSpec = {
  name: 'vapi',
  connectionModes: ['sip_trunk', 'media_bridge'],
  regions: VAPI_REGIONS,
  defaultRegion: 'us',
  // Vapi's edge takes UDP and TCP on 5060; UDP is its documented first choice.
  defaultSipTransport: 'udp',
  sipUri(endpoints, { didNumber, transport }) {
    // A Vapi SIP number is `sip:<username>@sip.vapi.ai`; numbers on a tenant's own trunk use a
    // host under the Vapi credential id, which only the tenant knows (it gives a sip_uri).
    if (!endpoints.sipHost || !didNumber) return null;
    return buildSipUri({ user: didNumber, host: endpoints.sipHost, transport });
  },
  // The socket URL is per call: `POST {base}/call` with transport `vapi.websocket` returns it.
  streamingUrl: (endpoints) => (endpoints.apiBaseUrl ? `${endpoints.apiBaseUrl}/call` : null),
  verifyRequest(endpoints, externalAgentId, apiKey) {
    const segment = agentPathSegment(externalAgentId);
    if (segment === null || !endpoints.apiBaseUrl) return null;
    return { url: `${endpoints.apiBaseUrl}/assistant/${segment}`, headers: { authorization: `Bearer ${apiKey}` } };
  },
  agentName: (body) => stringMember(body, 'name'),
};

/** The Vapi adapter: `GET {base}/assistant/{id}` with a Bearer private key. */
export function createVapiAdapter(options: AdapterOptions): ProviderAdapter {
  return createPlatformAdapter(spec, options);
}
