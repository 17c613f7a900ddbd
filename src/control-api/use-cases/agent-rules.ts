/**
 * @module The inventory rules of docs/API.md "Agents, routes, numbers and SIP credentials": which settings each connection mode needs,
 * what defaults apply, and how a live verification answer maps to an API outcome.
 */
import { ApiError } from '../../common/errors.js';
import type { SipCredentialId } from '../../common/ids.js';
import type { AgentSettings, AgentTransferPolicy } from '../../storage/index.js';
import type { AgentPlatform, AgentPlatforms, PlatformVerifyResult } from '../ports.js';
import { problems } from '../problem.js';

/** The settings fields as they arrive in a request (all optional). */
export interface SettingsInput {
  name?: string;
  connection_mode?: string;
  region?: string;
  sip_credential_id?: string;
  sip_uri?: string;
  sip_transport?: 'udp' | 'tcp' | 'tls';
  sip_region?: string;
  websocket_url?: string;
  transfer_policy?: AgentTransferPolicy | null;
}

export function platformOf(platforms: AgentPlatforms, provider: string): AgentPlatform {
  const platform = platforms.get(provider);
  if (!platform) {
    throw new ApiError(400, 'unsupported_provider', `Provider "${provider}" is not supported; use one of: ${platforms.names().join(', ')}.`);
  }
  return platform;
}

function invalid(path: string, message: string): ApiError {
  return problems.validation([{ path, message }]);
}

/**
 * Fills defaults and checks the per-mode requirements. Omitted settings take their defaults (so a
 * PUT that omits one resets it, as docs/API.md "Agents, routes, numbers and SIP credentials" says). Addresses are checked by agent-address-rules.
 */
export function resolveSettings(
  agent: { provider: string; externalAgentId: string }, platform: AgentPlatform, input: SettingsInput,
): AgentSettings {
  const { provider } = agent;
  const mode = input.connection_mode ?? 'sip_trunk';
  if (mode !== 'sip_trunk' && mode !== 'media_bridge') {
    throw new ApiError(400, 'unsupported_connection_mode', `Connection mode "${mode}" is not supported; use sip_trunk or media_bridge.`);
  }
  if (!platform.connectionModes.includes(mode)) {
    throw new ApiError(400, 'unsupported_connection_mode', `Provider "${provider}" does not offer ${mode}; it offers ${platform.connectionModes.join(', ')}.`);
  }
  const region = input.region ?? platform.defaultRegion;
  if (!platform.regions.includes(region)) throw invalid('/region', `must be one of ${platform.regions.join(', ')} for ${provider}`);
  if (input.sip_region !== undefined && !platform.regions.includes(input.sip_region)) {
    throw invalid('/sip_region', `must be one of ${platform.regions.join(', ')} for ${provider}`);
  }
  if (mode === 'sip_trunk' && input.sip_uri === undefined && !platform.endpoints(input.sip_region ?? region).sipHost) {
    throw invalid('/sip_uri', `is required: ${provider} has no default SIP edge`);
  }
  if (mode === 'media_bridge' && input.websocket_url === undefined && platform.defaultStreamingUrl(region, agent.externalAgentId) === null) {
    throw invalid('/websocket_url', `is required: ${provider} has no default streaming endpoint`);
  }
  return {
    name: input.name ?? null,
    connection_mode: mode,
    region,
    sip_credential_id: (input.sip_credential_id ?? null) as SipCredentialId | null,
    sip_uri: input.sip_uri ?? null,
    sip_transport: mode === 'sip_trunk' ? (input.sip_transport ?? platform.defaultSipTransport) : (input.sip_transport ?? null),
    sip_region: input.sip_region ?? null,
    websocket_url: input.websocket_url ?? null,
    transfer_policy: input.transfer_policy ?? null,
  };
}

/**
 * Maps a live check to the documented answers (docs/API.md "Agents, routes, numbers and SIP credentials"): found → verified now; not_supported → stored
 * unverified; otherwise the error to send.
 */
export function verificationOutcome(result: PlatformVerifyResult, provider: string): { verified: boolean } {
  switch (result.outcome) {
    case 'found': return { verified: true };
    case 'not_supported': return { verified: false };
    case 'not_found': throw new ApiError(404, 'agent_not_found_on_platform', `The agent does not exist on the ${provider} account of that key.`);
    case 'bad_credentials': throw new ApiError(400, 'provider_credentials_invalid', `${provider} rejected the api_key.`);
    case 'unavailable': throw new ApiError(502, 'provider_unavailable', `${provider} did not answer usefully`, { cause: result.reason });
  }
}
