/**
 * @module The agent inventory (docs/API.md "Agents, routes, numbers and SIP credentials"): import with live verification and an optional
 * route, read, list and update. Agent and route are created in one transaction.
 */
import type { Clock } from '../../../common/clock.js';
import { ApiError } from '../../../common/errors.js';
import type { TenantId } from '../../../common/ids.js';
import { isoNow } from '../../../common/time.js';
import type { AgentRecord, AgentSettings, ApiKeyChange, RouteRecord, Store } from '../../../storage/index.js';
import { listRoute } from '../../pagination.js';
import type { AgentPlatform, AgentPlatforms } from '../../ports.js';
import { problems } from '../../problem.js';
import { defineRoute, type AnyRoute } from '../../route.js';
import { checkAgentAddresses, type AgentAddressPolicy } from './agent-address-rules.js';
import { platformOf, resolveSettings, verificationOutcome } from './agent-rules.js';
import { AgentSchema, IdParams, ImportAgentResponse, UpdateAgentBody, importAgentBody } from './agents.schemas.js';

export interface AgentRouteDeps {
  store: Pick<Store, 'agents' | 'routes' | 'numbers' | 'sipCredentials' | 'transaction'>;
  platforms: AgentPlatforms;
  clock: Clock;
  /** The outbound-address policy of websocket_url and sip_uri (docs/SECURITY.md, "Outbound addresses"). */
  addresses: AgentAddressPolicy;
}

export const presentAgent = (a: AgentRecord) => ({
  id: a.id, provider: a.provider, external_agent_id: a.external_agent_id, name: a.name, connection_mode: a.connection_mode,
  region: a.region, sip_credential_id: a.sip_credential_id, sip_uri: a.sip_uri, sip_transport: a.sip_transport,
  sip_region: a.sip_region, websocket_url: a.websocket_url, api_key_set: a.api_key_set, api_key_last4: a.api_key_last4,
  verified_at: a.verified_at, created_at: a.created_at, updated_at: a.updated_at,
});

export const presentRoute = (r: RouteRecord) => ({
  id: r.id, did_number: r.did_number, agent_provider: r.agent_provider, agent_id: r.agent_id, carrier: r.carrier, created_at: r.created_at,
});

const AGENT_ERRORS = {
  400: 'Validation (`validation_failed`, also for a `websocket_url` or `sip_uri` that does not parse or that names or resolves to a non-public address), `unsupported_provider`, `unsupported_connection_mode`, `did_not_routable`, `provider_credentials_invalid`, `unknown_sip_credential`.',
  502: 'The provider did not answer the verification (`provider_unavailable`).',
};

function checkSipCredential(deps: AgentRouteDeps, tenantId: TenantId, settings: AgentSettings): void {
  if (settings.sip_credential_id !== null && !deps.store.sipCredentials.get(tenantId, settings.sip_credential_id)) {
    throw new ApiError(400, 'unknown_sip_credential', 'No SIP credential with that id.', { errors: [{ path: '/sip_credential_id', message: 'is not a stored SIP credential' }] });
  }
}

/** The carrier on which the tenant holds `did`, when it is free to route; else 400 did_not_routable. */
function routableCarrier(deps: AgentRouteDeps, tenantId: TenantId, did: string): string {
  const held = deps.store.numbers.activeForTenant(tenantId, did);
  if (!held) throw new ApiError(400, 'did_not_routable', `${did} is not a number this tenant holds.`);
  if (deps.store.routes.liveForDid(did, held.carrier)) throw new ApiError(400, 'did_not_routable', `${did} is already routed.`);
  return held.carrier;
}

async function verifyKey(platform: AgentPlatform, provider: string, externalAgentId: string, apiKey: string, region: string, clock: Clock): Promise<string | null> {
  const { verified } = verificationOutcome(await platform.verify({ externalAgentId, apiKey, region }), provider);
  return verified ? isoNow(clock) : null;
}

function duplicateError(existing: AgentRecord): ApiError {
  return new ApiError(409, 'agent_already_imported', 'This agent is already imported.', { extra: { existing_id: existing.id } });
}

export function agentRoutes(deps: AgentRouteDeps): AnyRoute[] {
  const { store } = deps;
  return [
    defineRoute({
      method: 'POST', path: '/v1/agents/import', operationId: 'importAgent', tags: ['agents'], auth: 'tenant',
      summary: 'Import an agent hosted on a voice-agent platform, optionally routing a DID to it',
      body: importAgentBody(deps.platforms.names()),
      responses: { 200: { description: 'The agent (key redacted) and the route created, or null.', schema: ImportAgentResponse } },
      errors: { ...AGENT_ERRORS, 404: 'The agent id does not exist on the platform account (`agent_not_found_on_platform`).', 409: 'Already imported (`agent_already_imported`, with `existing_id`).' },
      async handle({ body, principal: { tenantId } }) {
        const platform = platformOf(deps.platforms, body.provider);
        const settings = resolveSettings({ provider: body.provider, externalAgentId: body.external_agent_id }, platform, body);
        checkSipCredential(deps, tenantId, settings);
        await checkAgentAddresses(body, deps.addresses);
        const existing = store.agents.findByExternalId(tenantId, body.provider, body.external_agent_id);
        if (existing) throw duplicateError(existing);
        if (body.did_number !== undefined) routableCarrier(deps, tenantId, body.did_number);
        const apiKey = body.api_key ?? null;
        const verifiedAt = apiKey === null ? null : await verifyKey(platform, body.provider, body.external_agent_id, apiKey, settings.region, deps.clock);
        // Checked again inside the transaction: another request may have won while we verified.
        const { agent, route } = store.transaction(() => {
          const again = store.agents.findByExternalId(tenantId, body.provider, body.external_agent_id);
          if (again) throw duplicateError(again);
          const carrier = body.did_number === undefined ? undefined : routableCarrier(deps, tenantId, body.did_number);
          const created = store.agents.insert(tenantId, { provider: body.provider, external_agent_id: body.external_agent_id, settings, apiKey, verifiedAt });
          const bound = carrier === undefined ? null : store.routes.insert(tenantId, { didNumber: body.did_number!, carrier, agentId: created.id });
          return { agent: created, route: bound };
        });
        return { status: 200, body: { ...presentAgent(agent), route: route && presentRoute(route) } };
      },
    }),
    listRoute({
      path: '/v1/agents', operationId: 'listAgents', tag: 'agents', summary: "The tenant's agents, newest first",
      item: AgentSchema, list: (tenantId, page) => store.agents.list(tenantId, page), present: presentAgent,
    }),
    defineRoute({
      method: 'GET', path: '/v1/agents/{id}', operationId: 'getAgent', tags: ['agents'], auth: 'tenant',
      summary: 'An agent definition (the provider key redacted)',
      params: IdParams,
      responses: { 200: { description: 'The agent.', schema: AgentSchema } },
      errors: { 404: 'No such agent for this tenant (`not_found`).' },
      handle({ params, principal }) {
        const agent = store.agents.get(principal.tenantId, params.id);
        if (!agent) throw problems.notFound('agent');
        return { status: 200, body: presentAgent(agent) };
      },
    }),
    defineRoute({
      method: 'PUT', path: '/v1/agents/{id}', operationId: 'updateAgent', tags: ['agents'], auth: 'tenant',
      summary: 'Replace an agent definition',
      description: 'Omitted settings return to their defaults. `api_key` omitted keeps the stored key, null clears it, a new value is verified live. `provider`, `external_agent_id` and `did_number` cannot change (`immutable_field`).',
      params: IdParams,
      body: UpdateAgentBody,
      responses: { 200: { description: 'The updated agent.', schema: AgentSchema } },
      errors: { ...AGENT_ERRORS, 400: `${AGENT_ERRORS[400]} Changing provider, external_agent_id or did_number: \`immutable_field\`.`, 404: 'No such agent (`not_found`), or the agent is gone from the platform (`agent_not_found_on_platform`).' },
      async handle({ params, body, principal: { tenantId } }) {
        const agent = store.agents.get(tenantId, params.id);
        if (!agent) throw problems.notFound('agent');
        for (const field of ['provider', 'external_agent_id'] as const) {
          if (body[field] !== undefined && body[field] !== agent[field]) {
            throw new ApiError(400, 'immutable_field', `${field} cannot be changed; import a new agent instead.`, { errors: [{ path: `/${field}`, message: 'is immutable' }] });
          }
        }
        if (body.did_number !== undefined) {
          throw new ApiError(400, 'immutable_field', 'did_number cannot be changed here; use /v1/routes and number release.', { errors: [{ path: '/did_number', message: 'is immutable' }] });
        }
        const platform = platformOf(deps.platforms, agent.provider);
        const settings = resolveSettings({ provider: agent.provider, externalAgentId: agent.external_agent_id }, platform, body);
        checkSipCredential(deps, tenantId, settings);
        await checkAgentAddresses(body, deps.addresses);
        let key: ApiKeyChange = { kind: 'keep' };
        if (body.api_key === null) key = { kind: 'clear' };
        else if (body.api_key !== undefined) {
          key = { kind: 'set', value: body.api_key, verifiedAt: await verifyKey(platform, agent.provider, agent.external_agent_id, body.api_key, settings.region, deps.clock) };
        }
        const updated = store.agents.update(tenantId, agent.id, settings, key);
        if (!updated) throw problems.notFound('agent');
        return { status: 200, body: presentAgent(updated) };
      },
    }),
  ];
}
