/**
 * @module The outbound-address policy on stored agent settings (docs/SECURITY.md, "Outbound
 * addresses"): a `websocket_url` or `sip_uri` that does not parse, names a non-public address or
 * resolves to one (any answer) is refused with 400 `validation_failed`. The engine checks again
 * when it connects, since a name may resolve differently by then.
 */
import type { Clock } from '../../common/clock.js';
import { resolveChecked, type OutboundAddressPolicy } from '../../common/outbound-policy.js';
import type { HostResolver, SipUriLocator } from '../ports.js';
import { problems } from '../problem.js';
import { resolveWithin } from './call-rules.js';
import type { SettingsInput } from './agent-rules.js';

export interface AgentAddressPolicy {
  /** For `websocket_url` (config `calls.allow_private_agent_urls`). */
  agentUrls: OutboundAddressPolicy;
  /** For `sip_uri` (config `calls.allow_private_sip_targets`). */
  sipTargets: OutboundAddressPolicy;
  resolveHost: HostResolver;
  locateSip: SipUriLocator;
  clock: Clock;
}

const NON_PUBLIC = 'must not point at a loopback, private, link-local or otherwise non-public address';

function invalid(path: string, message: string): Error {
  return problems.validation([{ path, message }], 'The agent address is not allowed.');
}

async function checkWebsocketUrl(value: string, policy: AgentAddressPolicy): Promise<void> {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid('/websocket_url', 'is not a valid URL');
  }
  if (url.hostname === '') throw invalid('/websocket_url', 'has no host');
  const resolver = (host: string) => resolveWithin(policy.resolveHost, host, policy.clock);
  const checked = await resolveChecked(url.hostname, policy.agentUrls, resolver);
  // A name that does not resolve yet is kept: the call fails as agent_unreachable if it still does not (docs/DECISIONS.md).
  if (!checked.ok && checked.reason === 'refused') throw invalid('/websocket_url', `${NON_PUBLIC} (${checked.detail})`);
}

async function checkSipUri(value: string, policy: AgentAddressPolicy): Promise<void> {
  const located = await policy.locateSip(value);
  if ('invalid' in located) throw invalid('/sip_uri', `is not a valid SIP URI: ${located.invalid}`);
  if (policy.sipTargets.refusesHostText(located.host)) throw invalid('/sip_uri', `${NON_PUBLIC} (${located.host})`);
  const refused = located.addresses.find((address) => !policy.sipTargets.permits(address));
  if (refused !== undefined) throw invalid('/sip_uri', `${NON_PUBLIC} (${located.host} resolves to ${refused})`);
}

/** Checks the addresses among `input` (import or PUT body); throws the 400 to answer. */
export async function checkAgentAddresses(input: SettingsInput, policy: AgentAddressPolicy): Promise<void> {
  if (input.websocket_url !== undefined) await checkWebsocketUrl(input.websocket_url, policy);
  if (input.sip_uri !== undefined) await checkSipUri(input.sip_uri, policy);
}
