/**
 * @module The outbound-address policy (docs/SECURITY.md, "Outbound addresses") as configured:
 * one rule, with the operator's exceptions per kind of address (config `calls.*`).
 */
import { OutboundAddressPolicy } from '../common/outbound-policy.js';
import type { Config } from '../config/schema.js';

export interface OutboundPolicies {
  /** Agent WebSocket URLs: `agent_ws_url` and media_bridge endpoints. */
  agentUrls: OutboundAddressPolicy;
  /** SIP targets of sip_trunk agents. */
  sipTargets: OutboundAddressPolicy;
}

export function outboundPolicies(config: Readonly<Config>): OutboundPolicies {
  const networks = config.calls.allowed_private_networks;
  return {
    agentUrls: new OutboundAddressPolicy({ allowPrivate: config.calls.allow_private_agent_urls, allowedPrivateNetworks: networks }),
    sipTargets: new OutboundAddressPolicy({ allowPrivate: config.calls.allow_private_sip_targets, allowedPrivateNetworks: networks }),
  };
}
