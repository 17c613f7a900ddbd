/**
 * @module ElevenLabs Agents Platform: regions, SIP edge, conversation socket and agent lookup.
 * Vendor reference: https://elevenlabs.io/docs/api-reference/agents/get and
 * https://elevenlabs.io/docs/agents-platform/phone-numbers/sip-trunking
 */
import { agentPathSegment, createPlatformAdapter, type AdapterOptions, type PlatformSpec } from '../http-adapter.js';
import { stringMember } from '../http-verify.js';
import type { ProviderAdapter, VerifyResult } from '../provider-adapter.js';
import { buildSipUri } from '../sip-uri.js';

/**
 * Residency environments are separate workspaces: a key and an agent id of one do not exist in
 * another, so the region must be the one the tenant's workspace lives in. Only the default
 * environment has a documented non-static SIP load balancer; the others fall back to it (the
 * static-IP edges are an Enterprise option the tenant gives as `sip_uri`).
 */
export const ELEVENLABS_REGIONS = {
  default: { apiBaseUrl: 'https://api.elevenlabs.io', wsBaseUrl: 'wss://api.elevenlabs.io', sipHost: 'sip.rtc.elevenlabs.io' },
  us: { apiBaseUrl: 'https://api.us.elevenlabs.io', wsBaseUrl: 'wss://api.us.elevenlabs.io', sipHost: 'sip.rtc.elevenlabs.io' },
  eu: {
    apiBaseUrl: 'https://api.eu.residency.elevenlabs.io',
    wsBaseUrl: 'wss://api.eu.residency.elevenlabs.io',
    sipHost: 'sip.rtc.elevenlabs.io',
  },
  in: {
    apiBaseUrl: 'https://api.in.residency.elevenlabs.io',
    wsBaseUrl: 'wss://api.in.residency.elevenlabs.io',
    sipHost: 'sip.rtc.elevenlabs.io',
  },
  sg: {
    apiBaseUrl: 'https://api.sg.residency.elevenlabs.io',
    wsBaseUrl: 'wss://api.sg.residency.elevenlabs.io',
    sipHost: 'sip.rtc.elevenlabs.io',
  },
} as const;

/**
 * ElevenLabs answers errors as `{"detail": {"status": "...", "message": "..."}}`; on an error
 * answer, `agent_not_found` and `invalid_api_key` decide whatever the HTTP status says.
 */
function interpretElevenLabs(status: number, body: unknown): VerifyResult | undefined {
  if (status < 400) return undefined;
  const detail = typeof body === 'object' && body !== null ? (body as { detail?: unknown }).detail : undefined;
  const detailStatus = stringMember(detail, 'status');
  if (detailStatus === 'agent_not_found') return { outcome: 'not_found' };
  if (detailStatus === 'invalid_api_key') return { outcome: 'bad_credentials' };
  return undefined;
}

const spec: PlatformSpec = {
  name: 'elevenlabs',
  connectionModes: ['sip_trunk', 'media_bridge'],
  regions: ELEVENLABS_REGIONS,
  defaultRegion: 'default',
  // UDP signalling was documented as unavailable; TCP on 5060 is the documented default.
  defaultSipTransport: 'tcp',
  sipUri(endpoints, { didNumber, transport }) {
    // The edge routes on the user part, the number imported into ElevenLabs; a bare host is the
    // "common mistake" of the SIP trunking guide, so without a number there is no default.
    if (!endpoints.sipHost || !didNumber) return null;
    return buildSipUri({ user: didNumber, host: endpoints.sipHost, transport, explicitPort: true });
  },
  streamingUrl(endpoints, externalAgentId) {
    if (!endpoints.wsBaseUrl) return null;
    return `${endpoints.wsBaseUrl}/v1/convai/conversation?agent_id=${encodeURIComponent(externalAgentId)}`;
  },
  verifyRequest(endpoints, externalAgentId, apiKey) {
    const segment = agentPathSegment(externalAgentId);
    if (segment === null || !endpoints.apiBaseUrl) return null;
    return { url: `${endpoints.apiBaseUrl}/v1/convai/agents/${segment}`, headers: { 'xi-api-key': apiKey } };
  },
  interpret: interpretElevenLabs,
  agentName: (body) => stringMember(body, 'name'),
};

/** The ElevenLabs adapter: `GET {base}/v1/convai/agents/{id}` with `xi-api-key`. */
export function createElevenLabsAdapter(options: AdapterOptions): ProviderAdapter {
  return createPlatformAdapter(spec, options);
}
