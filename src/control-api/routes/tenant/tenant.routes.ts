/** @module GET /v1/tenant: who the credentials belong to (the first call a new integration makes). */
import { Type } from '@sinclair/typebox';
import { StringEnum } from '../../../common/schema.js';
import type { TenantRepository } from '../../../storage/index.js';
import { component } from '../../openapi/openapi-document.js';
import { problems } from '../../problem.js';
import { defineRoute, type AnyRoute } from '../../route.js';

const TenantSchema = Type.Object(
  {
    id: Type.String({ examples: ['ten_0m3x9a1bcDEFghijkLMNOpq'] }),
    name: Type.String(),
    key_kind: StringEnum(['live', 'sandbox'], { description: 'Kind of the key (or of the key behind the session) used for this request.' }),
    auth: StringEnum(['bearer', 'cookie']),
    created_at: Type.String({ format: 'date-time' }),
  },
  component('Tenant'),
);

export function tenantRoutes(deps: { tenants: Pick<TenantRepository, 'get'> }): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET', path: '/v1/tenant', operationId: 'getTenant', tags: ['tenant'], auth: 'tenant',
      summary: 'The authenticated tenant',
      responses: { 200: { description: 'The tenant the credentials belong to.', schema: TenantSchema } },
      async handle({ principal }) {
        const tenant = await deps.tenants.get(principal.tenantId);
        if (!tenant) throw problems.unauthorized();
        return { status: 200, body: { id: tenant.id, name: tenant.name, key_kind: principal.keyKind, auth: principal.via, created_at: tenant.created_at } };
      },
    }),
  ];
}
