/**
 * @module OpenAI Realtime: the "agent" is a Realtime model, checked against the account's models.
 * Vendor reference: https://platform.openai.com/docs/api-reference/models/retrieve and
 * https://platform.openai.com/docs/guides/realtime-sip
 */
import { agentPathSegment, createPlatformAdapter, type AdapterOptions, type PlatformSpec } from '../http-adapter.js';
import type { ProviderAdapter } from '../provider-adapter.js';

/**
 * One public API. The SIP edge routes on the OpenAI project id (`sip:<project>@sip.api.openai.com`),
 * which is not the model, so a tenant using sip_trunk gives `sip_uri`.
 */
export const OPENAI_REGIONS = {
  default: { apiBaseUrl: 'https://api.openai.com', wsBaseUrl: 'wss://api.openai.com', sipHost: 'sip.api.openai.com' },
} as const;

const spec: PlatformSpec = {
  name: 'openai',
  connectionModes: ['sip_trunk', 'media_bridge'],
  regions: OPENAI_REGIONS,
  defaultRegion: 'default',
  // OpenAI documents its SIP edge with transport=tls only.
  defaultSipTransport: 'tls',
  sipUri: () => null,
  streamingUrl(endpoints, externalAgentId) {
    if (!endpoints.wsBaseUrl) return null;
    return `${endpoints.wsBaseUrl}/v1/realtime?model=${encodeURIComponent(externalAgentId)}`;
  },
  verifyRequest(endpoints, externalAgentId, apiKey) {
    const segment = agentPathSegment(externalAgentId);
    if (segment === null || !endpoints.apiBaseUrl) return null;
    return { url: `${endpoints.apiBaseUrl}/v1/models/${segment}`, headers: { authorization: `Bearer ${apiKey}` } };
  },
  // A model has an id but no display name.
  agentName: () => undefined,
};

/** The OpenAI adapter: `GET {base}/v1/models/{model}` with a Bearer key. */
export function createOpenAiAdapter(options: AdapterOptions): ProviderAdapter {
  return createPlatformAdapter(spec, options);
}
