/** @module Inbound routes (DID → agent): list, read, delete. Routes are created by agent import. */
import type { RouteRepository } from '../../../storage/index.js';
import { listRoute } from '../../pagination.js';
import { problems } from '../../problem.js';
import { defineRoute, type AnyRoute } from '../../route.js';
import { presentRoute } from '../agents/agents.routes.js';
import { IdParams, RouteSchema } from '../agents/agents.schemas.js';

export function routeRoutes(deps: { routes: Pick<RouteRepository, 'list' | 'get' | 'delete'> }): AnyRoute[] {
  return [
    listRoute({
      path: '/v1/routes', operationId: 'listRoutes', tag: 'routes', summary: "The tenant's inbound routes, newest first",
      item: RouteSchema, list: (tenantId, page) => deps.routes.list(tenantId, page), present: presentRoute,
    }),
    defineRoute({
      method: 'GET', path: '/v1/routes/{id}', operationId: 'getRoute', tags: ['routes'], auth: 'tenant',
      summary: 'One inbound route', params: IdParams,
      responses: { 200: { description: 'The route.', schema: RouteSchema } },
      errors: { 404: 'No such route for this tenant (`not_found`).' },
      async handle({ params, principal }) {
        const route = await deps.routes.get(principal.tenantId, params.id);
        if (!route) throw problems.notFound('route');
        return { status: 200, body: presentRoute(route) };
      },
    }),
    defineRoute({
      method: 'DELETE', path: '/v1/routes/{id}', operationId: 'deleteRoute', tags: ['routes'], auth: 'tenant',
      summary: 'Delete an inbound route', description: 'New INVITEs to the DID get SIP 404 from then on; calls in progress continue.',
      params: IdParams,
      responses: { 204: { description: 'Deleted.' } },
      errors: { 404: 'No such route for this tenant (`not_found`).' },
      async handle({ params, principal }) {
        if (!await deps.routes.delete(principal.tenantId, params.id)) throw problems.notFound('route');
        return { status: 204 };
      },
    }),
  ];
}
