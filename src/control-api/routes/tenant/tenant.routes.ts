/**
 * @module GET /v1/tenant: who the credentials belong to (the first call a new integration makes);
 * PUT /v1/tenant/transfer-policy: the tenant's default `transfer_policy` for agents without their
 * own (docs/API.md "Transfers asked by the agent").
 */
import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from '../../../common/schema.js';
import type { TenantRepository } from '../../../storage/index.js';
import { component } from '../../openapi/openapi-document.js';
import { problems } from '../../problem.js';
import { defineRoute, type AnyRoute } from '../../route.js';
import { TransferPolicy } from '../agents/agents.schemas.js';
import type { Principal } from '../../api-state.js';

const TenantSchema = Type.Object(
  {
    id: Type.String({ examples: ['ten_0m3x9a1bcDEFghijkLMNOpq'] }),
    name: Type.String(),
    key_kind: StringEnum(['live', 'sandbox'], { description: 'Kind of the key (or of the key behind the session) used for this request.' }),
    auth: StringEnum(['bearer', 'cookie']),
    created_at: Type.String({ format: 'date-time' }),
    transfer_policy: Type.Union([TransferPolicy, Type.Null()], { description: 'Transfers an agent without its own `transfer_policy` may ask for; null: none.' }),
  },
  component('Tenant'),
);

const UpdateTenantBody = Type.Object(
  {
    transfer_policy: Type.Union([TransferPolicy, Type.Null()], { description: 'The default for agents without their own `transfer_policy`; null: no agent-initiated transfer.' }),
  },
  { additionalProperties: false },
);

type Tenants = Pick<TenantRepository, 'get' | 'transferPolicy' | 'setTransferPolicy'>;

async function presentTenant(tenants: Tenants, principal: Principal): Promise<Static<typeof TenantSchema>> {
  const tenant = await tenants.get(principal.tenantId);
  if (!tenant) throw problems.unauthorized();
  return {
    id: tenant.id, name: tenant.name, key_kind: principal.keyKind, auth: principal.via, created_at: tenant.created_at,
    transfer_policy: await tenants.transferPolicy(tenant.id),
  };
}

export function tenantRoutes(deps: { tenants: Tenants }): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET', path: '/v1/tenant', operationId: 'getTenant', tags: ['tenant'], auth: 'tenant',
      summary: 'The authenticated tenant',
      responses: { 200: { description: 'The tenant the credentials belong to.', schema: TenantSchema } },
      async handle({ principal }) {
        return { status: 200, body: await presentTenant(deps.tenants, principal) };
      },
    }),
    defineRoute({
      method: 'PUT', path: '/v1/tenant/transfer-policy', operationId: 'setTenantTransferPolicy', tags: ['tenant'], auth: 'tenant',
      summary: 'Set the tenant\'s default transfer policy',
      description: '`transfer_policy`: the transfers an agent without its own policy may ask for (a REFER on its SIP leg, a `transfer` event on its socket); null: none. The operator\'s denied prefixes apply whatever it says.',
      body: UpdateTenantBody,
      responses: { 200: { description: 'The tenant with its new defaults.', schema: TenantSchema } },
      async handle({ body, principal }) {
        if (!(await deps.tenants.setTransferPolicy(principal.tenantId, body.transfer_policy))) throw problems.unauthorized();
        return { status: 200, body: await presentTenant(deps.tenants, principal) };
      },
    }),
  ];
}
