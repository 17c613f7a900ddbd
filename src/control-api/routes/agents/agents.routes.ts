/**
 * @module The agent inventory (docs/API.md "Agents, routes, numbers and SIP credentials"): import with live verification and an optional
 * route, read, list and update. Each handler parses, calls its use case (use-cases/agent-inventory.ts)
 * and presents the result.
 */
import type { AgentRecord, RouteRecord } from '../../../storage/index.js';
import { listRoute } from '../../pagination.js';
import { problems } from '../../problem.js';
import { defineRoute, type AnyRoute } from '../../route.js';
import { importAgent, updateAgent, type AgentInventoryDeps } from '../../use-cases/agent-inventory.js';
import { AgentSchema, IdParams, ImportAgentResponse, UpdateAgentBody, importAgentBody } from './agents.schemas.js';

export type AgentRouteDeps = AgentInventoryDeps;

export const presentAgent = (a: AgentRecord) => ({
  id: a.id, provider: a.provider, external_agent_id: a.external_agent_id, name: a.name, connection_mode: a.connection_mode,
  region: a.region, sip_credential_id: a.sip_credential_id, sip_uri: a.sip_uri, sip_transport: a.sip_transport,
  sip_region: a.sip_region, websocket_url: a.websocket_url, transfer_policy: a.transfer_policy, api_key_set: a.api_key_set, api_key_last4: a.api_key_last4,
  verified_at: a.verified_at, created_at: a.created_at, updated_at: a.updated_at,
});

export const presentRoute = (r: RouteRecord) => ({
  id: r.id, did_number: r.did_number, agent_provider: r.agent_provider, agent_id: r.agent_id, carrier: r.carrier, created_at: r.created_at,
});

const AGENT_ERRORS = {
  400: 'Validation (`validation_failed`, also for a `websocket_url` or `sip_uri` that does not parse or that names or resolves to a non-public address), `unsupported_provider`, `unsupported_connection_mode`, `did_not_routable`, `provider_credentials_invalid`, `unknown_sip_credential`.',
  502: 'The provider did not answer the verification (`provider_unavailable`).',
};

export function agentRoutes(deps: AgentRouteDeps): AnyRoute[] {
  const { store } = deps;
  return [
    defineRoute({
      method: 'POST', path: '/v1/agents/import', operationId: 'importAgent', tags: ['agents'], auth: 'tenant',
      summary: 'Import an agent hosted on a voice-agent platform, optionally routing a DID to it',
      body: importAgentBody(deps.platforms.names()),
      responses: { 200: { description: 'The agent (key redacted) and the route created, or null.', schema: ImportAgentResponse } },
      errors: { ...AGENT_ERRORS, 404: 'The agent id does not exist on the platform account (`agent_not_found_on_platform`).', 409: 'Already imported (`agent_already_imported`, with `existing_id`).' },
      async handle({ body, principal }) {
        const { agent, route } = await importAgent(deps, principal.tenantId, body);
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
      async handle({ params, principal }) {
        const agent = await store.agents.get(principal.tenantId, params.id);
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
      async handle({ params, body, principal }) {
        return { status: 200, body: presentAgent(await updateAgent(deps, principal.tenantId, params.id, body)) };
      },
    }),
  ];
}
