/**
 * @module The call layer's AgentConnector, built from the providers' streaming sessions. A
 * tenant's `agent_ws_url` is checked again when the call connects, under the outbound-address
 * policy (docs/SECURITY.md "Outbound addresses"), and the socket is pinned to
 * the address that passed, so a DNS answer that changes in between cannot redirect it.
 */
import type { Clock } from '../common/clock.js';
import type { TenantId } from '../common/ids.js';
import type { Logger } from '../common/logger.js';
import type { HostResolver, OutboundAddressPolicy } from '../common/outbound-policy.js';
import type { AgentCallInfo, AgentConnector, AgentLink, AgentLinkHandlers } from '../engine/calls/index.js';
import { OWN_PROTOCOL_VENDOR, type AgentSessionFactory } from '../providers/index.js';
import { CheckedAgentLink, type AgentConnectObserver } from './checked-agent-link.js';

export interface AgentConnectorOptions {
  clock: Clock;
  logger: Logger;
  /** The session of the gateway's own agent protocol (the registry's `OWN_PROTOCOL_VENDOR`) for `agent_ws_url` calls. */
  websocketAgent: AgentSessionFactory;
  /** The outbound-address policy of agent URLs (config `calls.allow_private_agent_urls`, `calls.allowed_private_networks`). */
  agentUrls: OutboundAddressPolicy;
  connectTimeoutMs: number;
  /** media_bridge agents: the platform's streaming session for an imported agent. */
  importedAgent(request: { tenantId: TenantId; agentId: string; call: AgentCallInfo; handlers: AgentLinkHandlers }): Promise<AgentLink>;
  /** Name resolution (tests inject one); the outbound-address policy's by default. */
  resolve?: HostResolver;
  /** Told of each connection's outcome, for the metrics. */
  observe?: AgentConnectObserver;
}

export function createAgentConnector(o: AgentConnectorOptions): AgentConnector {
  return ({ call, tenantId, agent, handlers }): AgentLink | Promise<AgentLink> => {
    const log = o.logger.child({ call_id: call.callId, tenant_id: tenantId });
    if (agent.kind === 'imported') return o.importedAgent({ tenantId, agentId: agent.agentId, call, handlers });
    return new CheckedAgentLink({
      provider: OWN_PROTOCOL_VENDOR.name, url: agent.url, policy: o.agentUrls, ...(o.resolve ? { resolve: o.resolve } : {}), ...(o.observe ? { observe: o.observe } : {}),
      open: (lookup) => o.websocketAgent({
        call, endpoint: { url: agent.url, externalAgentId: '' }, clock: o.clock, connectTimeoutMs: o.connectTimeoutMs,
        handlers, lookup, log: (level, message, fields) => log[level](fields ?? {}, `agent: ${message}`),
      }),
    });
  };
}
