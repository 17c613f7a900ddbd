/**
 * @module Imported agents at call time: the SIP target of a sip_trunk agent (its `sip_uri`, or
 * its platform's edge for its region or per-call registration, the stored SIP credential, the
 * platform's call-identification headers) and the streaming session of a media_bridge agent (the
 * platform's session with the tenant's stored key). Everything per vendor comes from the provider
 * registry (docs/PROVIDERS.md, "Adding a vendor"); nothing here names a vendor.
 */
import type { Clock } from '../common/clock.js';
import type { TenantId } from '../common/ids.js';
import type { Logger } from '../common/logger.js';
import type { HostResolver, OutboundAddressPolicy } from '../common/outbound-policy.js';
import type { AgentCallInfo, AgentLink, AgentLinkHandlers, SipTrunkResolver, SipTrunkTarget } from '../engine/calls/index.js';
import type { ProviderRegistry } from '../providers/index.js';
import type { Store } from '../storage/index.js';
import { CheckedAgentLink, type AgentConnectObserver } from './checked-agent-link.js';

export interface AgentTargetOptions {
  store: Store;
  platforms: ProviderRegistry;
  clock: Clock;
  logger: Logger;
  connectTimeoutMs: number;
  /** The outbound-address policy of media_bridge endpoints (docs/SECURITY.md, "Outbound addresses"). */
  agentUrls: OutboundAddressPolicy;
  /** Name resolution (tests inject one); the outbound-address policy's by default. */
  resolve?: HostResolver;
  /** Media encryption of sip_trunk legs, by provider (config `providers.<name>.media_encryption`). */
  sipTrunkEncryption?: Readonly<Record<string, SipTrunkTarget['mediaEncryption']>>;
  /** Told of each media_bridge connection's outcome, for the metrics. */
  observeConnect?: AgentConnectObserver;
}

export function createSipTrunkResolver(o: AgentTargetOptions): SipTrunkResolver {
  return async ({ tenantId, agentId, call }) => {
    const agent = await o.store.agents.get(tenantId, agentId);
    const platform = agent && o.platforms.get(agent.provider);
    const edge = agent && o.platforms.sipEdge(agent.provider);
    if (!agent || !platform || !edge) return { error: 'agent or provider no longer exists' };
    const transport = agent.sip_transport ?? platform.defaultSipTransport;
    const region = agent.sip_region ?? agent.region;
    let uri = agent.sip_uri;
    if (!uri && edge.registerCall) {
      const registered = await edge.registerCall({
        endpoints: platform.endpoints(region), apiKey: await o.store.agents.apiKey(tenantId, agent.id), externalAgentId: agent.external_agent_id,
        call, transport, timeoutMs: o.connectTimeoutMs,
      });
      if ('error' in registered) return { ...registered, provider: agent.provider };
      uri = registered.uri;
    }
    uri ??= platform.defaultSipUri(region, { didNumber: call.to, externalAgentId: agent.external_agent_id, transport });
    if (!uri) return { error: `no SIP target for ${agent.provider} agent`, provider: agent.provider };
    const target: SipTrunkTarget = { uri, provider: agent.provider, headers: edge.callHeaders(call) };
    if (agent.transfer_policy) target.transferPolicy = { allow: agent.transfer_policy.allow, maxPerCall: agent.transfer_policy.max_per_call };
    const encryption = o.sipTrunkEncryption?.[agent.provider];
    if (encryption !== undefined && encryption !== 'disabled') target.mediaEncryption = encryption;
    if (agent.sip_credential_id) {
      const credential = await o.store.sipCredentials.get(tenantId, agent.sip_credential_id);
      const password = credential && await o.store.sipCredentials.password(tenantId, agent.sip_credential_id);
      if (!credential || !password) return { error: 'the agent\'s SIP credential is gone', provider: agent.provider };
      target.credentials = { username: credential.username, password, ...(credential.realm ? { realm: credential.realm } : {}) };
    }
    return target;
  };
}

/**
 * The streaming session of a media_bridge agent, or an Error when it has none. Its endpoint is
 * checked and its sockets pinned under the outbound-address policy when it starts.
 */
export async function openImportedAgent(o: AgentTargetOptions, request: { tenantId: TenantId; agentId: string; call: AgentCallInfo; handlers: AgentLinkHandlers }): Promise<AgentLink> {
  const agent = await o.store.agents.get(request.tenantId, request.agentId);
  const apiKey = agent ? await o.store.agents.apiKey(request.tenantId, agent.id) : null;
  const platform = agent && o.platforms.get(agent.provider);
  const factory = agent && o.platforms.streaming(agent.provider);
  const url = agent && platform ? agent.websocket_url ?? platform.defaultStreamingUrl(agent.region, agent.external_agent_id) : null;
  if (!agent || !platform || !factory || !url) throw new Error('the agent has no streaming endpoint');
  const log = o.logger.child({ call_id: request.call.callId, tenant_id: request.tenantId, provider: agent.provider });
  return new CheckedAgentLink({
    provider: agent.provider, url, policy: o.agentUrls, ...(o.resolve ? { resolve: o.resolve } : {}), ...(o.observeConnect ? { observe: o.observeConnect } : {}),
    open: (lookup) => factory({
      call: request.call,
      endpoint: { url, externalAgentId: agent.external_agent_id, apiBaseUrl: platform.endpoints(agent.region).apiBaseUrl },
      apiKey: apiKey ?? undefined,
      clock: o.clock, connectTimeoutMs: o.connectTimeoutMs, handlers: request.handlers, lookup,
      log: (level, message, fields) => log[level](fields ?? {}, `agent: ${message}`),
    }),
  });
}
