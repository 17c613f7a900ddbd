/**
 * @module Importing and updating agents (docs/API.md "Agents, routes, numbers and SIP credentials"):
 * settings resolved per connection mode, addresses checked by the outbound-address policy, the
 * provider key verified live, and agent and route created in one transaction.
 */
import type { Clock } from '../../common/clock.js';
import { ApiError } from '../../common/errors.js';
import type { TenantId } from '../../common/ids.js';
import { isoNow } from '../../common/time.js';
import type { AgentRecord, AgentSettings, ApiKeyChange, Repositories, RouteRecord, Store } from '../../storage/index.js';
import type { AgentPlatform, AgentPlatforms } from '../ports.js';
import { problems } from '../problem.js';
import { checkAgentAddresses, type AgentAddressPolicy } from './agent-address-rules.js';
import { platformOf, resolveSettings, verificationOutcome, type SettingsInput } from './agent-rules.js';

export interface AgentInventoryDeps {
  store: Pick<Store, 'agents' | 'routes' | 'numbers' | 'sipCredentials' | 'transaction'>;
  platforms: AgentPlatforms;
  clock: Clock;
  /** The outbound-address policy of websocket_url and sip_uri (docs/SECURITY.md, "Outbound addresses"). */
  addresses: AgentAddressPolicy;
}

export interface ImportAgentInput extends SettingsInput {
  provider: string;
  external_agent_id: string;
  api_key?: string;
  did_number?: string;
}

export interface UpdateAgentInput extends SettingsInput {
  provider?: string;
  external_agent_id?: string;
  api_key?: string | null;
  did_number?: string;
}

async function checkSipCredential(deps: AgentInventoryDeps, tenantId: TenantId, settings: AgentSettings): Promise<void> {
  if (settings.sip_credential_id !== null && !(await deps.store.sipCredentials.get(tenantId, settings.sip_credential_id))) {
    throw new ApiError(400, 'unknown_sip_credential', 'No SIP credential with that id.', { errors: [{ path: '/sip_credential_id', message: 'is not a stored SIP credential' }] });
  }
}

/** The carrier on which the tenant holds `did`, when it is free to route; else 400 did_not_routable. */
async function routableCarrier(store: Pick<Repositories, 'numbers' | 'routes'>, tenantId: TenantId, did: string): Promise<string> {
  const held = await store.numbers.activeForTenant(tenantId, did);
  if (!held) throw new ApiError(400, 'did_not_routable', `${did} is not a number this tenant holds.`);
  if (await store.routes.liveForDid(did, held.carrier)) throw new ApiError(400, 'did_not_routable', `${did} is already routed.`);
  return held.carrier;
}

async function verifyKey(platform: AgentPlatform, provider: string, externalAgentId: string, apiKey: string, region: string, clock: Clock): Promise<string | null> {
  const { verified } = verificationOutcome(await platform.verify({ externalAgentId, apiKey, region }), provider);
  return verified ? isoNow(clock) : null;
}

function duplicateError(existing: AgentRecord): ApiError {
  return new ApiError(409, 'agent_already_imported', 'This agent is already imported.', { extra: { existing_id: existing.id } });
}

/** Imports an agent, and routes `did_number` to it when given. */
export async function importAgent(deps: AgentInventoryDeps, tenantId: TenantId, input: ImportAgentInput): Promise<{ agent: AgentRecord; route: RouteRecord | null }> {
  const { store } = deps;
  const platform = platformOf(deps.platforms, input.provider);
  const settings = resolveSettings({ provider: input.provider, externalAgentId: input.external_agent_id }, platform, input);
  await checkSipCredential(deps, tenantId, settings);
  await checkAgentAddresses(input, deps.addresses);
  const existing = await store.agents.findByExternalId(tenantId, input.provider, input.external_agent_id);
  if (existing) throw duplicateError(existing);
  if (input.did_number !== undefined) await routableCarrier(store, tenantId, input.did_number);
  const apiKey = input.api_key ?? null;
  const verifiedAt = apiKey === null ? null : await verifyKey(platform, input.provider, input.external_agent_id, apiKey, settings.region, deps.clock);
  // Checked again inside the transaction: another request may have won while we verified.
  return store.transaction(async (tx) => {
    const again = await tx.agents.findByExternalId(tenantId, input.provider, input.external_agent_id);
    if (again) throw duplicateError(again);
    const carrier = input.did_number === undefined ? undefined : await routableCarrier(tx, tenantId, input.did_number);
    const agent = await tx.agents.insert(tenantId, { provider: input.provider, external_agent_id: input.external_agent_id, settings, apiKey, verifiedAt });
    const route = carrier === undefined ? null : await tx.routes.insert(tenantId, { didNumber: input.did_number!, carrier, agentId: agent.id });
    return { agent, route };
  });
}

/**
 * Replaces an agent's settings: omitted ones return to their defaults, `api_key` omitted keeps the
 * stored key, null clears it, a new value is verified live; provider, external id and DID are fixed.
 */
export async function updateAgent(deps: AgentInventoryDeps, tenantId: TenantId, agentId: string, input: UpdateAgentInput): Promise<AgentRecord> {
  const agent = await deps.store.agents.get(tenantId, agentId);
  if (!agent) throw problems.notFound('agent');
  for (const field of ['provider', 'external_agent_id'] as const) {
    if (input[field] !== undefined && input[field] !== agent[field]) {
      throw new ApiError(400, 'immutable_field', `${field} cannot be changed; import a new agent instead.`, { errors: [{ path: `/${field}`, message: 'is immutable' }] });
    }
  }
  if (input.did_number !== undefined) {
    throw new ApiError(400, 'immutable_field', 'did_number cannot be changed here; use /v1/routes and number release.', { errors: [{ path: '/did_number', message: 'is immutable' }] });
  }
  const platform = platformOf(deps.platforms, agent.provider);
  const settings = resolveSettings({ provider: agent.provider, externalAgentId: agent.external_agent_id }, platform, input);
  await checkSipCredential(deps, tenantId, settings);
  await checkAgentAddresses(input, deps.addresses);
  let key: ApiKeyChange = { kind: 'keep' };
  if (input.api_key === null) key = { kind: 'clear' };
  else if (input.api_key !== undefined) {
    key = { kind: 'set', value: input.api_key, verifiedAt: await verifyKey(platform, agent.provider, agent.external_agent_id, input.api_key, settings.region, deps.clock) };
  }
  const updated = await deps.store.agents.update(tenantId, agent.id, settings, key);
  if (!updated) throw problems.notFound('agent');
  return updated;
}
